/* bench/secretd's floor: the least any Secret Service provider can cost through dbus-daemon.
 *
 *   floor-provider N      owns org.freedesktop.secrets and answers from memory, with sd-bus and
 *                         nothing else, for N items named like bench.py's (attributes bench=1,
 *                         id=K, xdg:schema=org.example.Bench; secret "secret-K"; label "bench K")
 *
 * It answers exactly the calls secret-tool makes (GetAll on the service, collections and items,
 * OpenSession, SearchItems, Unlock, GetSecrets, GetSecret, ReadAlias) and refuses the DH algorithm with
 * NotSupported, so clients use `plain` (no key exchange on either side). Whatever time a client
 * spends above this provider is the bus's and its own, not a provider's: bench/secretd prints it
 * as the "floor" column. Not a Secret Service: no storage, no locking, no sessions kept.
 * Built by run.sh with the system C compiler: cc -O2 floor-provider.c -lsystemd */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#define BASE "/org/freedesktop/secrets"
#define LOGIN BASE "/collection/login"
#define ITEM LOGIN "/i"

static unsigned items;

/* The item number of `path`, or -1 if it is not one of ours. */
static long item_of(const char *path) {
    if (strncmp(path, ITEM, strlen(ITEM)) != 0) return -1;
    char *end;
    long k = strtol(path + strlen(ITEM), &end, 10);
    return (*end == 0 && k >= 0 && k < (long)items) ? k : -1;
}

/* Whether item k has every pair of the a{ss} at the message's read position. */
static int matches(sd_bus_message *m, long k, int *error) {
    int ok = 1, r;
    const char *name, *value;
    char id[32];
    snprintf(id, sizeof id, "%ld", k);
    if ((r = sd_bus_message_enter_container(m, 'a', "{ss}")) < 0) goto fail;
    while ((r = sd_bus_message_read(m, "{ss}", &name, &value)) > 0) {
        if (strcmp(name, "bench") == 0) ok &= strcmp(value, "1") == 0;
        else if (strcmp(name, "id") == 0) ok &= strcmp(value, id) == 0;
        else if (strcmp(name, "xdg:schema") == 0) ok &= strcmp(value, "org.example.Bench") == 0;
        else ok = 0;
    }
    if (r < 0 || (r = sd_bus_message_exit_container(m)) < 0 || (r = sd_bus_message_rewind(m, 1)) < 0) goto fail;
    return ok;
fail:
    *error = r;
    return 0;
}

static int append_item_properties(sd_bus_message *reply, long k) {
    char label[32], id[32];
    snprintf(label, sizeof label, "bench %ld", k);
    snprintf(id, sizeof id, "%ld", k);
    return sd_bus_message_append(reply, "a{sv}", 5, "Locked", "b", 0, "Label", "s", label, "Created", "t",
                                 (uint64_t)1, "Modified", "t", (uint64_t)1, "Attributes", "a{ss}", 3, "bench", "1",
                                 "id", id, "xdg:schema", "org.example.Bench");
}

static int append_paths(sd_bus_message *reply, sd_bus_message *query, int *error) {
    int r = sd_bus_message_open_container(reply, 'a', "o");
    char path[64];
    for (long k = 0; r >= 0 && k < (long)items; k++) {
        if (query && !matches(query, k, error)) continue;
        snprintf(path, sizeof path, ITEM "%ld", k);
        r = sd_bus_message_append(reply, "o", path);
    }
    return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int handle(sd_bus_message *m, void *userdata, sd_bus_error *e) {
    (void)userdata;
    const char *path = sd_bus_message_get_path(m), *member = sd_bus_message_get_member(m);
    const char *interface = sd_bus_message_get_interface(m);
    sd_bus_message *reply = NULL;
    int r = 0, error = 0;
    long k = item_of(path);
    if (!interface || !member) return 0;
    if ((r = sd_bus_message_new_method_return(m, &reply)) < 0) return r;
    if (strcmp(interface, "org.freedesktop.DBus.Properties") == 0 && strcmp(member, "GetAll") == 0) {
        if (k >= 0) r = append_item_properties(reply, k);
        else if (strcmp(path, BASE) == 0) r = sd_bus_message_append(reply, "a{sv}", 1, "Collections", "ao", 1, LOGIN);
        else if (strcmp(path, LOGIN) == 0 || strcmp(path, BASE "/aliases/default") == 0) {
            r = sd_bus_message_open_container(reply, 'a', "{sv}");
            if (r >= 0) r = sd_bus_message_append(reply, "{sv}", "Label", "s", "Login");
            if (r >= 0) r = sd_bus_message_append(reply, "{sv}", "Locked", "b", 0);
            if (r >= 0) r = sd_bus_message_open_container(reply, 'e', "sv");
            if (r >= 0) r = sd_bus_message_append(reply, "s", "Items");
            if (r >= 0) r = sd_bus_message_open_container(reply, 'v', "ao");
            if (r >= 0) r = append_paths(reply, NULL, &error);
            if (r >= 0) r = sd_bus_message_close_container(reply);
            if (r >= 0) r = sd_bus_message_close_container(reply);
            if (r >= 0) r = sd_bus_message_close_container(reply);
        } else r = sd_bus_message_append(reply, "a{sv}", 0);
    } else if (strcmp(member, "OpenSession") == 0) {
        const char *algorithm;
        if ((r = sd_bus_message_read(m, "s", &algorithm)) < 0) goto done;
        if (strcmp(algorithm, "plain") != 0) {
            sd_bus_message_unref(reply);
            return sd_bus_error_set(e, "org.freedesktop.DBus.Error.NotSupported", "plain only");
        }
        r = sd_bus_message_append(reply, "vo", "s", "", BASE "/session/1");
    } else if (strcmp(member, "SearchItems") == 0) {
        r = append_paths(reply, m, &error);
        if (r >= 0 && strcmp(interface, "org.freedesktop.Secret.Service") == 0)
            r = sd_bus_message_append(reply, "ao", 0);
    } else if (strcmp(member, "Unlock") == 0) {
        char **paths = NULL;
        if ((r = sd_bus_message_read_strv(m, &paths)) < 0) goto done;
        r = sd_bus_message_open_container(reply, 'a', "o");
        for (char **p = paths; r >= 0 && p && *p; p++) r = sd_bus_message_append(reply, "o", *p);
        if (r >= 0) r = sd_bus_message_close_container(reply);
        if (r >= 0) r = sd_bus_message_append(reply, "o", "/");
        for (char **p = paths; p && *p; p++) free(*p);
        free(paths);
    } else if (strcmp(member, "GetSecrets") == 0) {
        char **paths = NULL, secret[32];
        if ((r = sd_bus_message_read_strv(m, &paths)) < 0) goto done;
        r = sd_bus_message_open_container(reply, 'a', "{o(oayays)}");
        for (char **p = paths; r >= 0 && p && *p; p++) {
            long i = item_of(*p);
            if (i < 0) continue;
            int n = snprintf(secret, sizeof secret, "secret-%ld", i);
            r = sd_bus_message_open_container(reply, 'e', "o(oayays)");
            if (r >= 0) r = sd_bus_message_append(reply, "o", *p);
            if (r >= 0) r = sd_bus_message_open_container(reply, 'r', "oayays");
            if (r >= 0) r = sd_bus_message_append(reply, "o", BASE "/session/1");
            if (r >= 0) r = sd_bus_message_append_array(reply, 'y', "", 0);
            if (r >= 0) r = sd_bus_message_append_array(reply, 'y', secret, (size_t)n);
            if (r >= 0) r = sd_bus_message_append(reply, "s", "text/plain");
            if (r >= 0) r = sd_bus_message_close_container(reply);
            if (r >= 0) r = sd_bus_message_close_container(reply);
        }
        if (r >= 0) r = sd_bus_message_close_container(reply);
        for (char **p = paths; p && *p; p++) free(*p);
        free(paths);
    } else if (strcmp(member, "GetSecret") == 0 && k >= 0) {
        char secret[32];
        int n = snprintf(secret, sizeof secret, "secret-%ld", k);
        r = sd_bus_message_open_container(reply, 'r', "oayays");
        if (r >= 0) r = sd_bus_message_append(reply, "o", BASE "/session/1");
        if (r >= 0) r = sd_bus_message_append_array(reply, 'y', "", 0);
        if (r >= 0) r = sd_bus_message_append_array(reply, 'y', secret, (size_t)n);
        if (r >= 0) r = sd_bus_message_append(reply, "s", "text/plain");
        if (r >= 0) r = sd_bus_message_close_container(reply);
    } else if (strcmp(member, "ReadAlias") == 0) {
        r = sd_bus_message_append(reply, "o", LOGIN);
    } else if (strcmp(member, "Close") == 0) {
        r = 0;
    } else {
        sd_bus_message_unref(reply);
        return sd_bus_error_setf(e, "org.freedesktop.DBus.Error.UnknownMethod", "%s.%s", interface, member);
    }
done:
    if (r >= 0 && error < 0) r = error;
    if (r >= 0) r = sd_bus_send(NULL, reply, NULL);
    sd_bus_message_unref(reply);
    return r < 0 ? r : 1;
}

int main(int argc, char **argv) {
    sd_bus *bus = NULL;
    int r;
    items = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1000;
    if ((r = sd_bus_open_user(&bus)) < 0 || (r = sd_bus_add_fallback(bus, NULL, BASE, handle, NULL)) < 0 ||
        (r = sd_bus_request_name(bus, "org.freedesktop.secrets", 0)) < 0) {
        fprintf(stderr, "floor-provider: %s\n", strerror(-r));
        return 1;
    }
    for (;;) {
        if ((r = sd_bus_process(bus, NULL)) < 0) break;
        if (r > 0) continue;
        if ((r = sd_bus_wait(bus, (uint64_t)-1)) < 0) break;
    }
    sd_bus_unref(bus);
    return r < 0 && r != -ECONNRESET ? 1 : 0;
}
