#!/usr/bin/python3
"""Seeds and dumps a Secret Service provider through libsecret (python3-gi), for
46-secretd-import.sh.

  secretd-import.py seed N   stores N items (labels, unicode attributes and secrets)
  secretd-import.py dump     prints every item of the default collection, one JSON line
                             each (label, attributes, secret, content type), sorted
"""
import json
import sys

import gi

gi.require_version("Secret", "1")
from gi.repository import Secret  # noqa: E402

SCHEMA = Secret.Schema.new("org.example.Import", Secret.SchemaFlags.NONE, {
    "service": Secret.SchemaAttributeType.STRING, "user": Secret.SchemaAttributeType.STRING,
    "n": Secret.SchemaAttributeType.INTEGER})


def seed(count):
    for i in range(count):
        attributes = {"service": f"sérvice {i % 7} ✓", "user": f"zoë;=,\"{i}\" \t", "n": str(i)}
        # Every 50th secret is empty (valid in the spec); the rest differ per item.
        secret = "" if i % 50 == 0 else f"pässwörd {i} ∆ {'x' * (i % 13)}"
        if not Secret.password_store_sync(SCHEMA, attributes, Secret.COLLECTION_DEFAULT, f"Item №{i} — {i % 3}",
                                          secret, None):
            sys.exit(f"store {i} failed")


def dump():
    service = Secret.Service.get_sync(Secret.ServiceFlags.OPEN_SESSION | Secret.ServiceFlags.LOAD_COLLECTIONS, None)
    collection = Secret.Collection.for_alias_sync(service, "default", Secret.CollectionFlags.LOAD_ITEMS, None)
    items = collection.get_items()
    service.unlock_sync(items, None)
    Secret.Item.load_secrets_sync(items, None)
    lines = []
    for item in items:
        value = item.get_secret()
        lines.append(json.dumps({
            "label": item.get_label(), "attributes": dict(sorted(item.get_attributes().items())),
            "secret": value.get_text() if value else None,
            "type": value.get_content_type() if value else None}, ensure_ascii=False, sort_keys=True))
    for line in sorted(lines):
        print(line)


if __name__ == "__main__":
    if sys.argv[1] == "seed":
        seed(int(sys.argv[2]))
    else:
        dump()
