/* bench/secretd's floor: the least any Secret Service provider can cost through dbus-daemon.
 *
 *   floor-provider N [dh] owns org.freedesktop.secrets and answers from memory, with sd-bus and
 *                         nothing else, for N items named like bench.py's (attributes bench=1,
 *                         id=K, xdg:schema=org.example.Bench; secret "secret-K"; label "bench K")
 *
 * It answers exactly the calls secret-tool makes (GetAll on the service, collections and items,
 * OpenSession, SearchItems, Unlock, GetSecrets, GetSecret, ReadAlias), and CreateItem as bench.py
 * calls it: the message is read whole, the item numbered next (not stored) and ItemCreated emitted,
 * as the spec asks of every provider; the floor of bench/secretd's CreateItem figure. Without `dh` it refuses the
 * DH algorithm with NotSupported, so clients use `plain` (no key exchange on either side). With `dh`
 * it negotiates dh-ietf1024-sha256-aes128-cbc-pkcs7 as gnome-keyring and arca-secretd do (libgcrypt:
 * a 256-bit exponent, HKDF-SHA-256, AES-128-CBC per secret), so that the client pays its own key
 * exchange too: the floor of any provider that offers encrypted transfer, which is what secret-tool
 * asks for first. Whatever time a client spends above this provider is the bus's and its own, not a
 * provider's: bench/secretd prints it as the "floor" column. Not a Secret Service: no storage, no
 * locking, no session kept but the last DH key.
 * Built by run.sh with the system C compiler: cc -O2 floor-provider.c -lsystemd -lgcrypt */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gcrypt.h>
#include <systemd/sd-bus.h>

#define BASE "/org/freedesktop/secrets"
#define LOGIN BASE "/collection/login"
#define ITEM LOGIN "/i"

static unsigned items;
static int offer_dh;
/* The key of the last DH session (sessions "/session/dN"); plain ones are "/session/pN". */
static unsigned char dh_key[16];
static unsigned sessions;

static const char *oakley1024 =
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3"
    "CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A89"
    "9FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF";

/* 2^x mod p into `ours` (128 bytes), and the session key from the client's y (HKDF-SHA-256 of the
 * shared secret left-padded to 128 bytes, no salt, empty info). 0 or -1. */
static int dh_negotiate(const void *y, size_t ylen, unsigned char ours[128]) {
    gcry_mpi_t p = NULL, g = gcry_mpi_set_ui(NULL, 2), x = gcry_mpi_new(256), pub = gcry_mpi_new(1024),
               peer = NULL, shared = gcry_mpi_new(1024);
    unsigned char secret[128], prk[32], block[32], zero[32] = {0}, one = 1;
    size_t n = 0;
    int ok = gcry_mpi_scan(&p, GCRYMPI_FMT_HEX, oakley1024, 0, NULL) == 0 &&
             gcry_mpi_scan(&peer, GCRYMPI_FMT_USG, y, ylen, NULL) == 0;
    if (ok) {
        gcry_mpi_randomize(x, 256, GCRY_STRONG_RANDOM);
        gcry_mpi_powm(pub, g, x, p);
        gcry_mpi_powm(shared, peer, x, p);
        memset(ours, 0, 128);
        memset(secret, 0, 128);
        ok = gcry_mpi_print(GCRYMPI_FMT_USG, NULL, 0, &n, pub) == 0 && n <= 128 &&
             gcry_mpi_print(GCRYMPI_FMT_USG, ours + 128 - n, n, NULL, pub) == 0 &&
             gcry_mpi_print(GCRYMPI_FMT_USG, NULL, 0, &n, shared) == 0 && n <= 128 &&
             gcry_mpi_print(GCRYMPI_FMT_USG, secret + 128 - n, n, NULL, shared) == 0;
    }
    gcry_md_hd_t h;
    if (ok && gcry_md_open(&h, GCRY_MD_SHA256, GCRY_MD_FLAG_HMAC) == 0) {
        gcry_md_setkey(h, zero, 32);
        gcry_md_write(h, secret, 128);
        memcpy(prk, gcry_md_read(h, 0), 32);
        gcry_md_reset(h);
        gcry_md_setkey(h, prk, 32);
        gcry_md_write(h, &one, 1);
        memcpy(block, gcry_md_read(h, 0), 32);
        memcpy(dh_key, block, 16);
        gcry_md_close(h);
    } else ok = 0;
    gcry_mpi_release(p); gcry_mpi_release(g); gcry_mpi_release(x); gcry_mpi_release(pub);
    gcry_mpi_release(peer); gcry_mpi_release(shared);
    return ok ? 0 : -1;
}

/* Appends the (oayays) of `secret` for `session`: AES-128-CBC with a fresh IV in a DH session. */
static int append_secret(sd_bus_message *reply, const char *session, const char *secret, size_t n) {
    int r = sd_bus_message_open_container(reply, 'r', "oayays");
    if (r >= 0) r = sd_bus_message_append(reply, "o", session);
    if (strstr(session, "/session/d")) {
        unsigned char iv[16], data[48];
        size_t padded = (n / 16 + 1) * 16;
        gcry_cipher_hd_t c;
        gcry_create_nonce(iv, 16);
        memcpy(data, secret, n);
        memset(data + n, (int)(padded - n), padded - n);
        if (gcry_cipher_open(&c, GCRY_CIPHER_AES128, GCRY_CIPHER_MODE_CBC, 0) != 0) return -EIO;
        gcry_cipher_setkey(c, dh_key, 16);
        gcry_cipher_setiv(c, iv, 16);
        gcry_cipher_encrypt(c, data, padded, NULL, 0);
        gcry_cipher_close(c);
        if (r >= 0) r = sd_bus_message_append_array(reply, 'y', iv, 16);
        if (r >= 0) r = sd_bus_message_append_array(reply, 'y', data, padded);
    } else {
        if (r >= 0) r = sd_bus_message_append_array(reply, 'y', "", 0);
        if (r >= 0) r = sd_bus_message_append_array(reply, 'y', secret, n);
    }
    if (r >= 0) r = sd_bus_message_append(reply, "s", "text/plain");
    if (r >= 0) r = sd_bus_message_close_container(reply);
    return r;
}

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
        char session[64];
        if ((r = sd_bus_message_read(m, "s", &algorithm)) < 0) goto done;
        if (offer_dh && strcmp(algorithm, "dh-ietf1024-sha256-aes128-cbc-pkcs7") == 0) {
            const void *y;
            size_t ylen;
            unsigned char ours[128];
            if ((r = sd_bus_message_enter_container(m, 'v', "ay")) < 0 ||
                (r = sd_bus_message_read_array(m, 'y', &y, &ylen)) < 0)
                goto done;
            if (ylen == 0 || ylen > 128 || dh_negotiate(y, ylen, ours) < 0) {
                sd_bus_message_unref(reply);
                return sd_bus_error_set(e, "org.freedesktop.DBus.Error.InvalidArgs", "bad public key");
            }
            snprintf(session, sizeof session, BASE "/session/d%u", ++sessions);
            if ((r = sd_bus_message_open_container(reply, 'v', "ay")) >= 0 &&
                (r = sd_bus_message_append_array(reply, 'y', ours, 128)) >= 0 &&
                (r = sd_bus_message_close_container(reply)) >= 0)
                r = sd_bus_message_append(reply, "o", session);
            goto done;
        }
        if (strcmp(algorithm, "plain") != 0) {
            sd_bus_message_unref(reply);
            return sd_bus_error_set(e, "org.freedesktop.DBus.Error.NotSupported", "plain only");
        }
        snprintf(session, sizeof session, BASE "/session/p%u", ++sessions);
        r = sd_bus_message_append(reply, "vo", "s", "", session);
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
        const char *session;
        if ((r = sd_bus_message_read_strv(m, &paths)) < 0 || (r = sd_bus_message_read(m, "o", &session)) < 0)
            goto done;
        r = sd_bus_message_open_container(reply, 'a', "{o(oayays)}");
        for (char **p = paths; r >= 0 && p && *p; p++) {
            long i = item_of(*p);
            if (i < 0) continue;
            int n = snprintf(secret, sizeof secret, "secret-%ld", i);
            r = sd_bus_message_open_container(reply, 'e', "o(oayays)");
            if (r >= 0) r = sd_bus_message_append(reply, "o", *p);
            if (r >= 0) r = append_secret(reply, session, secret, (size_t)n);
            if (r >= 0) r = sd_bus_message_close_container(reply);
        }
        if (r >= 0) r = sd_bus_message_close_container(reply);
        for (char **p = paths; p && *p; p++) free(*p);
        free(paths);
    } else if (strcmp(member, "GetSecret") == 0 && k >= 0) {
        char secret[32];
        const char *session;
        int n = snprintf(secret, sizeof secret, "secret-%ld", k);
        if ((r = sd_bus_message_read(m, "o", &session)) < 0) goto done;
        r = append_secret(reply, session, secret, (size_t)n);
    } else if (strcmp(member, "CreateItem") == 0) {
        char item[64];
        if ((r = sd_bus_message_skip(m, "a{sv}(oayays)b")) < 0) goto done;
        snprintf(item, sizeof item, ITEM "%u", items++);
        r = sd_bus_message_append(reply, "oo", item, "/");
        if (r >= 0) r = sd_bus_emit_signal(sd_bus_message_get_bus(m), LOGIN, "org.freedesktop.Secret.Collection",
                                           "ItemCreated", "o", item);
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
    offer_dh = argc > 2 && strcmp(argv[2], "dh") == 0;
    if (!gcry_check_version(GCRYPT_VERSION)) return 1;
    gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
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
