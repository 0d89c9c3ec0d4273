#!/usr/bin/python3
"""WAL frames per commit of a vault's write pattern, per B-tree (issue 15: "why do frames per
commit grow with n?"). Rebuilds the vault schema in a scratch SQLite file (Schema.swift: items
with its six indexes, attr_tags and its index) and adds items the way a Secret Service CreateItem
does: one item row (random ref, pk and account tags; constant service, server and group tags)
and three attribute tags (two constant pairs, one unique), one transaction each. Then, for 100
commits after 100, 1,000, 5,000 and 9,900 items, parses the WAL: frames per commit, the distinct
pages a checkpoint would write back, and which B-tree (dbstat) each frame belongs to ("new" =
pages allocated during those 100 commits; sqlite_schema = page 1, the header).

    python3 bench/vault/wal-frames.py [PAGE_SIZE]     (default 4096, the vault's)

No Arca code runs: the figures are SQLite's for this layout. Scratch files go in a temp dir.
"""
import shutil, tempfile
import sqlite3, os, struct, sys, collections
page = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
path = os.path.join(tempfile.mkdtemp(prefix="arca-wal-frames."), "sim.db")
for s in ("", "-wal", "-shm"):
    try: os.unlink(path + s)
    except FileNotFoundError: pass
db = sqlite3.connect(path, isolation_level=None)
db.execute("PRAGMA page_size=%d" % page)
db.execute("PRAGMA journal_mode=WAL"); db.execute("PRAGMA synchronous=OFF"); db.execute("PRAGMA wal_autocheckpoint=0")
db.executescript("""
CREATE TABLE items(id INTEGER PRIMARY KEY, ref BLOB NOT NULL UNIQUE, class INTEGER NOT NULL, accessible INTEGER NOT NULL,
 sync INTEGER NOT NULL, pk BLOB NOT NULL UNIQUE, svc BLOB NOT NULL, acct BLOB NOT NULL, srv BLOB NOT NULL, grp BLOB NOT NULL,
 wrapped_key BLOB NOT NULL, meta BLOB NOT NULL, secret BLOB NOT NULL);
CREATE INDEX items_svc ON items(svc); CREATE INDEX items_acct ON items(acct); CREATE INDEX items_srv ON items(srv); CREATE INDEX items_grp ON items(grp);
CREATE TABLE attr_tags(tag BLOB NOT NULL, item INTEGER NOT NULL, PRIMARY KEY(tag, item)) WITHOUT ROWID;
CREATE INDEX attr_tags_item ON attr_tags(item);
""")
C = {k: os.urandom(32) for k in ("svc", "srv", "grp", "bench", "schema")}
def add():
    db.execute("BEGIN IMMEDIATE"); db.execute("SAVEPOINT s")
    ref = os.urandom(16)
    db.execute("INSERT INTO items(ref,class,accessible,sync,pk,svc,acct,srv,grp,wrapped_key,meta,secret) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (ref, 1, 2, 0, os.urandom(32), C["svc"], os.urandom(32), C["srv"], C["grp"], os.urandom(72), os.urandom(260), os.urandom(40)))
    for t in (C["bench"], os.urandom(32), C["schema"]):
        db.execute("INSERT OR IGNORE INTO attr_tags(tag,item) SELECT ?, id FROM items WHERE ref = ?", (t, ref))
    db.execute("RELEASE s"); db.execute("COMMIT")
def walpages():
    data = open(path + "-wal", "rb").read()
    frames = []
    off = 32
    while off + 24 <= len(data):
        frames.append(struct.unpack(">I", data[off:off+4])[0]); off += 24 + page
    return frames
n = 0
marks = [100, 1000, 5000, 9900]
for m in marks:
    while n < m: add(); n += 1
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    names = dict(db.execute("SELECT pageno, name FROM dbstat"))
    before = len(walpages())
    per = collections.Counter()
    for i in range(100): add(); n += 1
    fr = walpages()[before:]
    for p in fr: per[names.get(p, "new")] += 1
    distinct = len(set(fr))
    print("page %d  items %5d-%5d: %.2f frames/commit, %d distinct pages over 100 commits; per btree: %s" % (
        page, m, m + 99, len(fr) / 100, distinct, ", ".join("%s %.2f" % (k, v / 100) for k, v in per.most_common())))
db.close()

shutil.rmtree(os.path.dirname(path))
