#!/usr/bin/python3
"""A test double of systemd-logind for arcad's logind watcher.

Owns org.freedesktop.login1 on the bus in DBUS_SYSTEM_BUS_ADDRESS and exposes
the Manager (ListSessions, SessionNew, SessionRemoved, PrepareForSleep) and one
object per session (/org/freedesktop/login1/session/_<id>) with the
org.freedesktop.login1.Session properties Id, User, LockedHint, emitting
PropertiesChanged on the concrete path as logind does. Inhibit returns the
write end of a pipe, as logind returns an inhibitor fd; the double watches the
read end and notes when every copy of the write end is closed (the inhibitor
released).

Driven through stdin, one command a line; each answers one line on stdout,
"ok <CLOCK_MONOTONIC ns after the signal was sent>":
  add ID UID [locked]   a session (SessionNew)
  lock ID | unlock ID   LockedHint true/false (PropertiesChanged)
  invalidate ID         PropertiesChanged naming LockedHint as invalidated only
  remove ID             SessionRemoved
  sleep 1|0             PrepareForSleep(true|false)
  inhibitors            "ok N": inhibitors taken and not yet released
  watch-key SERIAL      "ok": at each release, note whether kernel key SERIAL
                        (decimal) is still live, from /proc/keys, at once
  wait-release          waits until no inhibitor is held, then "ok <ns when
                        the last one was released> <live|gone|unwatched>"
  quit                  exit (logind "disappears")
"""
import os
import sys
import time

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

MANAGER = "org.freedesktop.login1.Manager"
SESSION = "org.freedesktop.login1.Session"
PROPS = "org.freedesktop.DBus.Properties"


def session_path(sid):
    return "/org/freedesktop/login1/session/_3" + sid


class Session(dbus.service.Object):
    def __init__(self, bus, sid, uid, locked):
        self.path = session_path(sid)
        super().__init__(bus, self.path)
        self.sid, self.uid, self.locked = sid, uid, locked

    def props(self):
        return {
            "Id": dbus.String(self.sid),
            "User": dbus.Struct((dbus.UInt32(self.uid), dbus.ObjectPath("/org/freedesktop/login1/user/_%d" % self.uid)),
                                signature="uo"),
            "LockedHint": dbus.Boolean(self.locked),
        }

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.props()[name]

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.props()

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


class Manager(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/freedesktop/login1")
        self.bus = bus
        self.sessions = {}
        self.inhibitors = 0
        self.released_ns = 0
        self.waiting_release = False
        self.watched_key = None
        self.key_at_release = "unwatched"

    def key_state(self):
        """live or gone: the watched key in /proc/keys (root sees arcad's root-owned keys)."""
        wanted = "%08x" % self.watched_key
        with open("/proc/keys") as keys:
            for line in keys:
                fields = line.split()
                if fields and fields[0] == wanted:
                    flags = fields[1]
                    return "gone" if any(f in flags for f in "iRD") else "live"
        return "gone"

    @dbus.service.method(MANAGER, in_signature="ssss", out_signature="h")
    def Inhibit(self, what, who, why, mode):
        read_end, write_end = os.pipe()
        fd = dbus.types.UnixFd(write_end)  # holds its own copy
        os.close(write_end)
        self.inhibitors += 1
        GLib.io_add_watch(read_end, GLib.IO_HUP | GLib.IO_ERR, self.on_release)
        return fd

    def on_release(self, source, condition):
        self.released_ns = time.monotonic_ns()
        # Looked at first thing: logind would let the machine sleep now.
        if self.watched_key is not None:
            self.key_at_release = self.key_state()
        os.close(source)
        self.inhibitors -= 1
        if self.waiting_release and self.inhibitors == 0:
            self.waiting_release = False
            print("ok %d %s" % (self.released_ns, self.key_at_release), flush=True)
        return False

    @dbus.service.method(MANAGER, out_signature="a(susso)")
    def ListSessions(self):
        return [(s.sid, dbus.UInt32(s.uid), "user%d" % s.uid, "seat0", dbus.ObjectPath(s.path))
                for s in self.sessions.values()]

    @dbus.service.signal(MANAGER, signature="so")
    def SessionNew(self, sid, path):
        pass

    @dbus.service.signal(MANAGER, signature="so")
    def SessionRemoved(self, sid, path):
        pass

    @dbus.service.signal(MANAGER, signature="b")
    def PrepareForSleep(self, start):
        pass

    def command(self, words):
        verb = words[0]
        if verb == "add":
            locked = len(words) > 3 and words[3] == "locked"
            s = Session(self.bus, words[1], int(words[2]), locked)
            self.sessions[words[1]] = s
            self.SessionNew(s.sid, dbus.ObjectPath(s.path))
        elif verb in ("lock", "unlock"):
            s = self.sessions[words[1]]
            s.locked = verb == "lock"
            s.PropertiesChanged(SESSION, {"LockedHint": dbus.Boolean(s.locked)}, dbus.Array([], signature="s"))
        elif verb == "invalidate":
            s = self.sessions[words[1]]
            s.locked = not s.locked
            s.PropertiesChanged(SESSION, dbus.Dictionary({}, signature="sv"), ["LockedHint"])
        elif verb == "remove":
            s = self.sessions.pop(words[1])
            s.remove_from_connection()
            self.SessionRemoved(s.sid, dbus.ObjectPath(s.path))
        elif verb == "sleep":
            self.PrepareForSleep(words[1] == "1")
        elif verb == "inhibitors":
            return "ok %d" % self.inhibitors
        elif verb == "watch-key":
            self.watched_key = int(words[1])
            return "ok %s" % self.key_state()
        elif verb == "wait-release":
            if self.inhibitors == 0:
                return "ok %d %s" % (self.released_ns, self.key_at_release)
            self.waiting_release = True
            return None
        elif verb == "quit":
            return False
        else:
            raise ValueError("unknown command " + verb)
        return True


def main():
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    name = dbus.service.BusName("org.freedesktop.login1", bus, do_not_queue=True)
    manager = Manager(bus)
    for spec in sys.argv[1:]:  # initial sessions: ID:UID[:locked]
        parts = spec.split(":")
        s = Session(bus, parts[0], int(parts[1]), len(parts) > 2 and parts[2] == "locked")
        manager.sessions[parts[0]] = s
    loop = GLib.MainLoop()

    def on_input(source, condition):
        line = sys.stdin.readline()
        if not line:
            loop.quit()
            return False
        words = line.split()
        if not words:
            return True
        try:
            going = manager.command(words)
            bus.flush()
            if isinstance(going, str) or going is None:  # an answer of its own, or one to come
                if going is not None:
                    print(going, flush=True)
                return True
            print("ok %d" % time.monotonic_ns(), flush=True)
        except Exception as error:  # report, keep serving
            print("error %s" % error, flush=True)
            return True
        if not going:
            loop.quit()
            return False
        return True

    GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, on_input)
    print("ready", flush=True)
    loop.run()
    del name


if __name__ == "__main__":
    main()
