#!/usr/bin/python3
"""A gcr system prompter for tests (org.gnome.keyring.SystemPrompter on the session bus,
interface org.gnome.keyring.internal.Prompter, as gcr-prompter and gnome-shell serve it).

  test-prompter.py ANSWER...   each PerformPrompt takes the next ANSWER: a password to
                               send back encrypted (sx-aes-1 exchange), or "-" for the user
                               cancelling ("no"), or "hold" for a prompt never answered.
                               Logs each call to stdout, one line each.

The exchange: DH in RFC 3526's 1536-bit group, HKDF-SHA-256 to a 16-byte key,
AES-128-CBC (openssl) with PKCS#7, key-file text; as gcr-secret-exchange.c.
"""
import base64, hashlib, hmac, secrets, subprocess, sys
import dbus, dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

P = int("FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A"
        "431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F"
        "24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552"
        "BB9ED529077096966D670C354E4ABC9804F1746C08CA237327FFFFFFFFFFFFFFFF", 16)
IFACE = "org.gnome.keyring.internal.Prompter"
CALLBACK = "org.gnome.keyring.internal.Prompter.Callback"
answers = sys.argv[1:]


def log(*a):
    print(*a, flush=True)


def parse(text):
    fields, group = {}, None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            group = line
        elif "=" in line and group == "[sx-aes-1]":
            k, v = line.split("=", 1)
            fields[k.strip()] = v.strip()
    return fields


class Prompter(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/gnome/keyring/Prompter")
        self.bus = bus

    def ready(self, sender, callback, reply, exchange):
        self.bus.get_object(sender, callback, introspect=False).PromptReady(
            reply, dbus.Dictionary({}, signature="sv"), exchange, dbus_interface=CALLBACK,
            reply_handler=lambda: None, error_handler=lambda e: log("PromptReady failed:", e.get_dbus_name()))
        return False

    @dbus.service.method(IFACE, in_signature="o", out_signature="", sender_keyword="sender")
    def BeginPrompting(self, callback, sender=None):
        log("BeginPrompting")
        GLib.idle_add(self.ready, sender, callback, "", "")

    @dbus.service.method(IFACE, in_signature="osa{sv}s", out_signature="", sender_keyword="sender")
    def PerformPrompt(self, callback, kind, properties, exchange, sender=None):
        warning = str(properties.get("warning", ""))
        log("PerformPrompt", kind, "warning:", warning or "-")
        answer = answers.pop(0) if answers else "-"
        if answer == "hold":  # the user has not answered yet
            return
        if answer == "-":
            GLib.idle_add(self.ready, sender, callback, "no", "")
            return
        peer = int.from_bytes(base64.b64decode(parse(str(exchange))["public"]), "big")
        private = secrets.randbits(256)
        public = pow(2, private, P).to_bytes(192, "big").lstrip(b"\0")
        shared = pow(peer, private, P).to_bytes(192, "big")
        prk = hmac.new(b"\0" * 32, shared, hashlib.sha256).digest()
        key = hmac.new(prk, b"\x01", hashlib.sha256).digest()[:16]
        iv = secrets.token_bytes(16)
        sealed = subprocess.run(["openssl", "enc", "-aes-128-cbc", "-K", key.hex(), "-iv", iv.hex()],
                                input=answer.encode(), capture_output=True, check=True).stdout
        text = "[sx-aes-1]\npublic=%s\nsecret=%s\niv=%s\n" % (
            base64.b64encode(public).decode(), base64.b64encode(sealed).decode(), base64.b64encode(iv).decode())
        GLib.idle_add(self.ready, sender, callback, "yes", text)

    @dbus.service.method(IFACE, in_signature="o", out_signature="", sender_keyword="sender")
    def StopPrompting(self, callback, sender=None):
        log("StopPrompting")
        self.bus.get_object(sender, callback, introspect=False).PromptDone(
            dbus_interface=CALLBACK, reply_handler=lambda: None, error_handler=lambda e: None)


DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
name = dbus.service.BusName("org.gnome.keyring.SystemPrompter", bus)
prompter = Prompter(bus)
GLib.timeout_add_seconds(60, lambda: sys.exit(0))
log("ready")
GLib.MainLoop().run()
