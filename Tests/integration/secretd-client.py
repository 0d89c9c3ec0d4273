#!/usr/bin/python3
"""Raw D-Bus clients of the Secret Service for Tests/integration/45-secretd.sh.

Each subcommand prints one line per check ("name: value") that the script compares
exactly. Uses python3-dbus only (no libsecret), and openssl(1) for AES-CBC.
"""
import hashlib, hmac, logging, os, secrets, subprocess, sys, threading, time
import dbus

# dbus-python logs a failed introspection of an object that no longer exists; the
# checks below print the error of the call itself.
logging.disable(logging.CRITICAL)

BUS = "org.freedesktop.secrets"
BASE = "/org/freedesktop/secrets"
SVC = "org.freedesktop.Secret.Service"
COL = "org.freedesktop.Secret.Collection"
ITEM = "org.freedesktop.Secret.Item"
PROPS = "org.freedesktop.DBus.Properties"
P = int("FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3"
        "CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899F"
        "A5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF", 16)


def bus():
    return dbus.SessionBus(private=True)


def obj(b, path):
    return b.get_object(BUS, path)


def err(call):
    try:
        call()
        return "ok"
    except dbus.DBusException as e:
        return e.get_dbus_name()


def attrs(d):
    return dbus.Dictionary(d, signature="ss")


def props(label, attributes):
    return dbus.Dictionary({ITEM + ".Label": dbus.String(label), ITEM + ".Attributes": attrs(attributes)},
                           signature="sv")


def plain(b):
    _, session = obj(b, BASE).OpenSession("plain", dbus.String(""), dbus_interface=SVC)
    return session


def secret(session, value, content_type="text/plain"):
    return dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(value), content_type), signature="oayays")


def hkdf(shared):
    prk = hmac.new(b"\0" * 32, shared, hashlib.sha256).digest()
    return hmac.new(prk, b"\x01", hashlib.sha256).digest()[:16]


def aes(mode, key, iv, data):
    return subprocess.run(["openssl", "enc", "-aes-128-cbc", mode, "-K", key.hex(), "-iv", iv.hex()],
                          input=data, capture_output=True, check=True).stdout


def chromium(b):
    """Chromium's sequence (os_crypt/key_storage_libsecret, via libsecret's calls)."""
    service = obj(b, BASE)
    default = service.ReadAlias("default", dbus_interface=SVC)
    print("ReadAlias default:", default)
    col = obj(b, default)
    print("Label:", col.Get(COL, "Label", dbus_interface=PROPS))
    unlocked, prompt = service.Unlock([default], dbus_interface=SVC)
    print("Unlock:", list(map(str, unlocked)), prompt)
    session = plain(b)
    a = {"application": "chrome", "xdg:schema": "chrome_libsecret_os_crypt_password_v2"}
    item, prompt = col.CreateItem(props("Chrome Safe Storage", a), secret(session, b"peanuts"), False,
                                  dbus_interface=COL)
    print("CreateItem prompt:", prompt)
    unlocked, locked = service.SearchItems(attrs(a), dbus_interface=SVC)
    print("SearchItems:", [str(p) == str(item) for p in unlocked], len(locked))
    s = obj(b, item).GetSecret(session, dbus_interface=ITEM)
    print("GetSecret:", bytes(s[2]).decode(), s[3])
    twin, _ = col.CreateItem(props("Chrome Safe Storage", a), secret(session, b"again"), False, dbus_interface=COL)
    print("replace=false twin:", str(twin) != str(item), len(service.SearchItems(attrs(a), dbus_interface=SVC)[0]))


def gokeyring(b):
    """go-keyring (zalando/go-keyring, secret_service.go): plain only, Unlock of the exact path."""
    service = obj(b, BASE)
    session = plain(b)
    col_path = BASE + "/collection/login"
    unlocked, prompt = service.Unlock([col_path], dbus_interface=SVC)
    print("Unlock exact:", list(map(str, unlocked)) == [col_path], prompt)
    col = obj(b, col_path)
    a = {"username": "alice", "service": "go-app"}
    item, _ = col.CreateItem(props("Password for 'alice' on 'go-app'", a), secret(session, b"s3 cr=t;"), True,
                             dbus_interface=COL)
    again, _ = col.CreateItem(props("Password for 'alice' on 'go-app'", a), secret(session, b"new"), True,
                              dbus_interface=COL)
    print("replace=true same item:", str(item) == str(again))
    found = col.SearchItems(attrs(a), dbus_interface=COL)
    print("SearchItems:", len(found))
    print("GetSecret:", bytes(obj(b, found[0]).GetSecret(session, dbus_interface=ITEM)[2]).decode())
    print("Delete prompt:", obj(b, found[0]).Delete(dbus_interface=ITEM))
    print("after Delete:", err(lambda: obj(b, found[0]).GetSecret(session, dbus_interface=ITEM)))
    print("unknown algorithm:", err(lambda: service.OpenSession("rot13", dbus.String(""), dbus_interface=SVC)))


def dh(b, public_length, want_leading_zero=False):
    """A DH session with a client public key of `public_length` bytes; GetSecret decrypted with openssl."""
    service = obj(b, BASE)
    for attempt in range(4000):
        if public_length == 1:
            x, y = 1, 2  # the smallest valid public key: 2 = g^1
        else:
            while True:
                x = secrets.randbits(1024)
                y = pow(2, x, P)
                if y.bit_length() > 1016:
                    break
        out, session = service.OpenSession(
            "dh-ietf1024-sha256-aes128-cbc-pkcs7", dbus.ByteArray(y.to_bytes(public_length, "big")), dbus_interface=SVC)
        server = int.from_bytes(bytes(out), "big")
        shared = pow(server, x, P).to_bytes(128, "big")
        if not want_leading_zero or shared[0] == 0:
            break
        obj(b, session).Close(dbus_interface="org.freedesktop.Secret.Session")
    key = hkdf(shared)
    col = obj(b, BASE + "/collection/login")
    iv = os.urandom(16)
    sealed = aes("-e", key, iv, "ünïcode ✓".encode())
    item, _ = col.CreateItem(props("dh", {"dh": str(public_length)}), dbus.Struct(
        (session, dbus.ByteArray(iv), dbus.ByteArray(sealed), "text/plain"), signature="oayays"), True,
        dbus_interface=COL)
    s = obj(b, item).GetSecret(session, dbus_interface=ITEM)
    print("server key bytes:", len(out), "leading zero:", shared[0] == 0 if want_leading_zero else "n/a")
    print("round trip:", aes("-d", key, bytes(s[1]), bytes(s[2])).decode(), len(bytes(s[1])))


def bad_keys(b):
    service = obj(b, BASE)
    for name, key in [("empty", b""), ("129 bytes", b"\x02" * 129), ("one", b"\x01"), ("zero", b"\x00"),
                      ("p-1", (P - 1).to_bytes(128, "big")), ("p", P.to_bytes(128, "big"))]:
        print(name + ":", err(lambda: service.OpenSession(
            "dh-ietf1024-sha256-aes128-cbc-pkcs7", dbus.ByteArray(key), dbus_interface=SVC)))
    print("variant of wrong type:", err(lambda: service.OpenSession(
        "dh-ietf1024-sha256-aes128-cbc-pkcs7", dbus.String("x"), dbus_interface=SVC)))


def sessions(b):
    """A session belongs to its opener; it goes when its opener leaves the bus."""
    other = bus()
    session = plain(other)
    col = obj(b, BASE + "/collection/login")
    mine = plain(b)
    item, _ = col.CreateItem(props("owned", {"owned": "1"}), secret(mine, b"x"), True, dbus_interface=COL)
    print("GetSecret with another client's session:",
          err(lambda: obj(b, item).GetSecret(session, dbus_interface=ITEM)))
    print("CreateItem with another client's session:", err(lambda: col.CreateItem(
        props("owned", {"owned": "2"}), secret(session, b"x"), False, dbus_interface=COL)))
    print("GetSecrets with another client's session:", err(lambda: obj(b, BASE).GetSecrets(
        [item], session, dbus_interface=SVC)))
    print("session visible while its owner is connected:", err(lambda: obj(b, session).GetAll(
        "org.freedesktop.Secret.Session", dbus_interface=PROPS)))
    other.close()
    time.sleep(0.3)
    print("after its owner disconnected:", err(lambda: obj(b, session).GetAll(
        "org.freedesktop.Secret.Session", dbus_interface=PROPS)))
    print("GetSecrets with my session:", len(obj(b, BASE).GetSecrets([item, BASE + "/collection/login/" + "0" * 32],
                                                                      mine, dbus_interface=SVC)))


def locked(b, phase):
    service = obj(b, BASE)
    a = {"lock": "test"}
    if phase == "store":
        session = plain(b)
        obj(b, BASE + "/collection/login").CreateItem(props("locked", a), secret(session, b"x"), True,
                                                       dbus_interface=COL)
        return
    session = plain(b)
    r = err(lambda: service.SearchItems(attrs(a), dbus_interface=SVC))
    if r == "ok":
        unlocked, lockedlist = service.SearchItems(attrs(a), dbus_interface=SVC)
        print("SearchItems:", len(unlocked), "unlocked,", len(lockedlist), "locked")
        item = lockedlist[0]
        print("Item Locked:", bool(obj(b, item).Get(ITEM, "Locked", dbus_interface=PROPS)))
        print("GetSecret:", err(lambda: obj(b, item).GetSecret(session, dbus_interface=ITEM)))
        print("GetSecrets leaves it out:", len(service.GetSecrets([item], session, dbus_interface=SVC)))
        print("GetAll:", sorted(str(k) for k in obj(b, item).GetAll(ITEM, dbus_interface=PROPS).keys()))
        target = item
    else:
        print("SearchItems:", r)
        target = BASE + "/collection/login"
        print("GetAll on the collection:", err(lambda: obj(b, target).GetAll(COL, dbus_interface=PROPS)))
    unlocked, prompt = service.Unlock([target], dbus_interface=SVC)
    print("Unlock:", len(unlocked), "prompt" if prompt.startswith(BASE + "/prompt/") else prompt)
    done = []
    loop_done = threading.Event()

    def completed(dismissed, result):
        done.append((bool(dismissed), list(result)))
        loop_done.set()

    from dbus.mainloop.glib import DBusGMainLoop
    from gi.repository import GLib
    DBusGMainLoop(set_as_default=True)
    b2 = dbus.SessionBus(private=True)
    service2 = b2.get_object(BUS, BASE)
    _, prompt2 = service2.Unlock([target], dbus_interface=SVC)
    b2.add_signal_receiver(completed, "Completed", "org.freedesktop.Secret.Prompt", path=prompt2)
    b2.get_object(BUS, prompt2).Prompt("", dbus_interface="org.freedesktop.Secret.Prompt")
    loop = GLib.MainLoop()
    GLib.timeout_add(3000, loop.quit)
    GLib.idle_add(lambda: (loop.quit() if loop_done.is_set() else True))
    loop.run()
    print("Prompt completed:", done)
    print("prompt gone:", err(lambda: b2.get_object(BUS, prompt2).Prompt("", dbus_interface="org.freedesktop.Secret.Prompt")))


def locked_property(b):
    """The Locked property and label of the item stored by `locked store` (read through any cache)."""
    service = obj(b, BASE)
    unlocked, lockedlist = service.SearchItems(attrs({"lock": "test"}), dbus_interface=SVC)
    item = (list(unlocked) + list(lockedlist))[0]
    p = obj(b, item).GetAll(ITEM, dbus_interface=PROPS)
    print("Locked:", bool(p["Locked"]), "Label:", str(p["Label"]) or "-")


def libsecret():
    """libsecret itself (what GNOME apps, python keyring and git-credential-libsecret use)."""
    import gi
    gi.require_version("Secret", "1")
    from gi.repository import Secret
    schema = Secret.Schema.new("org.example.Arca", Secret.SchemaFlags.NONE,
                               {"user": Secret.SchemaAttributeType.STRING, "port": Secret.SchemaAttributeType.INTEGER})
    print("store:", Secret.password_store_sync(schema, {"user": "zoë", "port": "443"}, Secret.COLLECTION_DEFAULT,
                                               "Example ✓", "pässword", None))
    print("lookup:", Secret.password_lookup_sync(schema, {"user": "zoë", "port": "443"}, None))
    print("lookup wrong case:", Secret.password_lookup_sync(schema, {"user": "Zoë"}, None))
    flags = Secret.SearchFlags.ALL | Secret.SearchFlags.UNLOCK | Secret.SearchFlags.LOAD_SECRETS
    items = Secret.password_search_sync(schema, {"user": "zoë"}, flags, None)
    item = items[0]
    print("search:", len(items), item.get_label(), sorted(item.get_attributes().items()),
          item.get_secret().get_text(), item.get_locked(), item.get_created() > 0)
    service = Secret.Service.get_sync(Secret.ServiceFlags.LOAD_COLLECTIONS, None)
    print("collections:", sorted(c.get_label() for c in service.get_collections()))
    print("clear:", Secret.password_clear_sync(schema, {"user": "zoë"}, None))
    print("lookup after clear:", Secret.password_lookup_sync(schema, {"user": "zoë"}, None))


def listen(b, probe, socket, uid):
    """ItemCreated for an item another client adds through arcad."""
    from dbus.mainloop.glib import DBusGMainLoop
    from gi.repository import GLib
    DBusGMainLoop(set_as_default=True)
    b = dbus.SessionBus(private=True)
    got = []
    loop = GLib.MainLoop()

    def created(path):
        got.append(str(path))
        loop.quit()

    b.add_signal_receiver(created, "ItemCreated", COL, path=BASE + "/collection/login")
    GLib.timeout_add(200, lambda: subprocess.run([probe, socket, "add-attribute", uid, "from arca", "origin=probe"],
                                                 input=b"pw\n", capture_output=True) and False)
    GLib.timeout_add(5000, loop.quit)
    loop.run()
    if not got:
        print("ItemCreated: none")
        return
    a = b.get_object(BUS, got[0]).Get(ITEM, "Attributes", dbus_interface=PROPS)
    print("ItemCreated:", {str(k): str(v) for k, v in a.items()})


def burst(count):
    """CreateItem calls sent at once by one client (pipelined in arca-secretd, one commit in
    arcad): each answered with its own item; one refused (65 attributes) fails alone."""
    from dbus.mainloop.glib import DBusGMainLoop
    from gi.repository import GLib
    DBusGMainLoop(set_as_default=True)
    b = dbus.SessionBus(private=True)
    session = plain(b)
    col = obj(b, BASE + "/collection/login")
    loop = GLib.MainLoop()
    replies, errors = {}, {}

    def answered():
        if len(replies) + len(errors) == count + 1:
            loop.quit()

    def send(n, attributes):
        def ok(item, prompt):
            replies[n] = (str(item), str(prompt))
            answered()

        def failed(e):
            errors[n] = e.get_dbus_name()
            answered()
        col.CreateItem(props("burst %d" % n, attributes), secret(session, b"s%d" % n), False, dbus_interface=COL,
                       reply_handler=ok, error_handler=failed)

    for n in range(count):
        send(n, {"burst": "1", "n": str(n)})
        if n == count // 2:
            send(-1, {"burst": "1", **{"a%d" % i: "x" for i in range(65)}})
    GLib.timeout_add(20000, loop.quit)
    loop.run()
    paths = [p for p, _ in replies.values()]
    print("answered:", len(replies), "distinct:", len(set(paths)), "prompts:", sorted(set(p for _, p in replies.values())))
    print("refused:", errors)
    found, locked = obj(b, BASE).SearchItems(attrs({"burst": "1"}), dbus_interface=SVC)
    print("found:", len(found), "locked:", len(locked), "same paths:", sorted(map(str, found)) == sorted(paths))
    secrets_ = obj(b, BASE).GetSecrets(found, session, dbus_interface=SVC)
    own = sum(bytes(secrets_[dbus.ObjectPath(p)][2]) == b"s%d" % n for n, (p, _) in replies.items())
    print("each reply names its own item:", own == count)


def prompt_unlock(b, attack):
    """Unlock the login collection through the system prompter; with `attack`, another
    client first answers the prompt's callback in the prompter's place."""
    from dbus.mainloop.glib import DBusGMainLoop
    from gi.repository import GLib
    DBusGMainLoop(set_as_default=True)
    b = dbus.SessionBus(private=True)
    login = BASE + "/collection/login"
    print("Locked before:", bool(obj(b, login).Get(COL, "Locked", dbus_interface=PROPS)))
    unlocked, prompt = obj(b, BASE).Unlock([login], dbus_interface=SVC)
    done = []
    loop = GLib.MainLoop()

    def completed(dismissed, result):
        done.append((bool(dismissed), [str(p) for p in result]))
        loop.quit()

    b.add_signal_receiver(completed, "Completed", "org.freedesktop.Secret.Prompt", path=prompt)
    b.get_object(BUS, prompt).Prompt("", dbus_interface="org.freedesktop.Secret.Prompt")
    if attack:
        time.sleep(1)
        owner = b.get_name_owner(BUS)
        callback = "/org/gnome/keyring/Prompt/arca" + prompt.rsplit("/", 1)[1]
        forged = "[sx-aes-1]\npublic=Ag==\nsecret=AAAAAAAAAAAAAAAAAAAAAA==\niv=AAAAAAAAAAAAAAAAAAAAAA==\n"
        print("PromptReady from another client:", err(lambda: b.get_object(owner, callback).PromptReady(
            "yes", dbus.Dictionary({}, signature="sv"), forged,
            dbus_interface="org.gnome.keyring.internal.Prompter.Callback")))
        print("Locked after the forged answer:", bool(obj(b, login).Get(COL, "Locked", dbus_interface=PROPS)))
        b.get_object(BUS, prompt).Dismiss(dbus_interface="org.freedesktop.Secret.Prompt")
    GLib.timeout_add(20000, loop.quit)
    loop.run()
    print("Completed:", done)
    print("Locked after:", bool(obj(b, login).Get(COL, "Locked", dbus_interface=PROPS)))


def reads():
    """GetSecret calls sent at once by one client, on the items of `burst` (arca-secretd
    reads them from arcad in one request): each answered with its own item's secret, in a
    session of its own; a SetSecret sent between two GetSecret calls of one item splits
    them (the first sees the old secret, the second the new); another client's session
    fails alone with NoSession."""
    from dbus.mainloop.glib import DBusGMainLoop
    from gi.repository import GLib
    DBusGMainLoop(set_as_default=True)
    b = dbus.SessionBus(private=True)
    session = plain(b)
    other = plain(bus())
    found, _ = obj(b, BASE).SearchItems(attrs({"burst": "1"}), dbus_interface=SVC)
    expected = {str(p): b"s" + str(obj(b, p).Get(ITEM, "Attributes", dbus_interface=PROPS)["n"]).encode()
                for p in found}
    first = str(sorted(found)[0])
    calls = [(str(p), session) for p in found] + [(first, "set"), (first, session), (first, other)]
    loop = GLib.MainLoop()
    answers = {}

    def send(k, path, session_):
        def ok(value):
            answers[k] = bytes(value[2])
            if len(answers) == len(calls): loop.quit()

        def failed(e):
            answers[k] = e.get_dbus_name()
            if len(answers) == len(calls): loop.quit()
        if session_ == "set":
            obj(b, path).SetSecret(secret(session, b"changed"), dbus_interface=ITEM,
                                   reply_handler=lambda: ok([0, 0, b"set"]), error_handler=failed)
        else:
            obj(b, path).GetSecret(session_, dbus_interface=ITEM, reply_handler=ok, error_handler=failed)

    for k, (path, session_) in enumerate(calls):
        send(k, path, session_)
    GLib.timeout_add(20000, loop.quit)
    loop.run()
    n = len(found)
    own = sum(answers.get(k) == expected[path] for k, (path, _) in enumerate(calls[:n]))
    print("items:", n, "each answered with its own secret:", own == n)
    before = [path for path, _ in calls[:n]].index(first)
    print("GetSecret, SetSecret, GetSecret of one item:", answers.get(before) == expected[first], answers.get(n),
          answers.get(n + 1))
    print("another client's session:", answers.get(n + 2))
    obj(b, first).SetSecret(secret(session, expected[first]), dbus_interface=ITEM)


def big_reads():
    """Two clients' GetSecret calls sent at once on 900 KiB secrets (arca-secretd reads them
    from arcad together; three do not fit in one 2 MiB reply, so it splits the batch): each
    caller gets its exact secrets; a deleted item among them fails alone (UnknownObject:
    arca-secretd knows it is gone before asking arcad)."""
    from dbus.mainloop.glib import DBusGMainLoop
    from gi.repository import GLib
    DBusGMainLoop(set_as_default=True)
    a, b = dbus.SessionBus(private=True), dbus.SessionBus(private=True)
    sa, sb = plain(a), plain(b)
    col = obj(a, BASE + "/collection/login")
    values = [secrets.token_bytes(900 << 10) for _ in range(3)]
    paths = [str(col.CreateItem(props("big %d" % n, {"big": str(n)}), secret(sa, v), False, dbus_interface=COL)[0])
             for n, v in enumerate(values)]
    gone = str(col.CreateItem(props("gone", {"big": "gone"}), secret(sa, b"x"), False, dbus_interface=COL)[0])
    obj(a, gone).Delete(dbus_interface=ITEM)
    calls = [(a, sa, paths[0]), (a, sa, paths[1]), (b, sb, paths[1]), (b, sb, gone), (a, sa, paths[2]),
             (b, sb, paths[0])]
    loop = GLib.MainLoop()
    answers = {}

    def send(k, b_, session_, path):
        def done(value):
            answers[k] = value
            if len(answers) == len(calls): loop.quit()
        obj(b_, path).GetSecret(session_, dbus_interface=ITEM, reply_handler=lambda v: done(bytes(v[2])),
                                error_handler=lambda e: done(e.get_dbus_name()), timeout=60)

    for k, (b_, session_, path) in enumerate(calls):
        send(k, b_, session_, path)
    GLib.timeout_add(50000, loop.quit)
    loop.run()
    expected = {p: v for p, v in zip(paths, values)}
    print("client a, exact secrets:", [answers.get(k) == expected[calls[k][2]] for k in (0, 1, 4)])
    print("client b, exact secrets:", [answers.get(k) == expected[calls[k][2]] for k in (2, 5)])
    print("client b, deleted item:", answers.get(3))
    for p in paths: obj(a, p).Delete(dbus_interface=ITEM)


if __name__ == "__main__":
    command, rest = sys.argv[1], sys.argv[2:]
    b = bus()
    if command == "chromium": chromium(b)
    elif command == "gokeyring": gokeyring(b)
    elif command == "dh": dh(b, int(rest[0]), len(rest) > 1)
    elif command == "badkeys": bad_keys(b)
    elif command == "sessions": sessions(b)
    elif command == "locked": locked(b, rest[0])
    elif command == "listen": listen(b, *rest)
    elif command == "libsecret": libsecret()
    elif command == "lockedprop": locked_property(b)
    elif command == "prompt": prompt_unlock(b, rest == ["attack"])
    elif command == "burst": burst(int(rest[0]))
    elif command == "reads": reads()
    elif command == "bigreads": big_reads()
    elif command == "label":
        print(obj(b, BASE + "/collection/login").Get(COL, "Label", dbus_interface=PROPS))
    elif command == "collocked":
        print(bool(obj(b, BASE + "/collection/login").Get(COL, "Locked", dbus_interface=PROPS)))
