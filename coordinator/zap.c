#include "zap.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zmq.h>

#include "clock.h"
#include "log.h"
#include "ratelimit.h"

enum {
    REQUEST_FRAMES = 7,          /* version, request id, domain, address, routing id, mechanism, key */
    FRAMES_MAX = 8,              /* kept of a request; more are read and dropped */
    POLL_MS = 100,               /* how soon the thread sees zap_destroy */
    CHECK_EVERY_MS = 1000,       /* zap_allows looks at the file at most this often */
    NAG_EVERY_MS = 60000         /* a broken list is logged again this often while it stays broken */
};

/* What tells a changed file: xqf-keys renames a new file over it (new inode); editors change size or mtime. */
typedef struct {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    int err;                     /* errno of stat, 0 when it worked */
} FileSig;

static FileSig file_sig(const char *path)
{
    struct stat st;
    FileSig s;
    memset(&s, 0, sizeof s);
    if (stat(path, &st) != 0) {
        s.err = errno;
        return s;
    }
    s.dev = st.st_dev;
    s.ino = st.st_ino;
    s.size = st.st_size;
    s.mtime = st.st_mtim;
    return s;
}

static bool sig_eq(const FileSig *a, const FileSig *b)
{
    return a->err == b->err && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

struct Zap {
    void *sock;                  /* REP: the thread's alone once started */
    pthread_t thread;
    bool running;
    atomic_bool stop;
    char *path;
    pthread_mutex_t lock;        /* guards list, sig, next_check_ms (the thread and zap_allows) */
    AllowList list;
    FileSig sig;
    bool broken;                 /* the file does not read or parse: nobody is let in or heard */
    char broken_why[512];
    int64_t next_check_ms, next_nag_ms;
    long refused_broken;         /* connections and messages refused since the last nag */
    Notes refusals;              /* the thread's */
    RateLimit *handshakes;       /* per allowed key (the thread's): --key-hellos a minute */
    int64_t handshakes_refused;
};

/*
 * Re-reads the list if the file changed (or, while it is broken, at every
 * call: a chmod that fixes it changes no size nor mtime).  A list that no
 * longer reads or parses makes the handler fail closed, logged as an
 * error: no new connection, no message of an open one, until the file
 * reads again.  Lock held.
 */
static void reload(Zap *z)
{
    FileSig sig = file_sig(z->path);
    if (!z->broken && sig_eq(&sig, &z->sig))
        return;
    z->sig = sig;
    char err[512];
    AllowList fresh;
    if (sig.err)
        snprintf(err, sizeof err, "%s: %s", z->path, strerror(sig.err));
    if (sig.err || allow_read(z->path, &fresh, err, sizeof err) != 0) {
        if (!z->broken || strcmp(err, z->broken_why) != 0)
            log_error("allow-list %s: REFUSING EVERY WORKER (new connections and the messages of open ones) "
                      "until the file reads again (fix it, or rewrite it with xqf-keys)", err);
        if (!z->broken)
            z->next_nag_ms = clock_now_ms() + NAG_EVERY_MS;
        z->broken = true;
        snprintf(z->broken_why, sizeof z->broken_why, "%s", err);
        allow_free(&z->list);
        return;
    }
    if (z->broken)
        log_warn("allow-list %s reads again: %d keys; workers are let in again", z->path, fresh.count);
    else
        log_info("allow-list %s re-read: %d keys (were %d)", z->path, fresh.count, z->list.count);
    z->broken = false;
    z->refused_broken = 0;
    allow_free(&z->list);
    z->list = fresh;
}

/* Counts a refusal for a broken list and repeats the error once a minute while it lasts. Lock held. */
static void refused_while_broken(Zap *z)
{
    z->refused_broken++;
    int64_t now = clock_now_ms();
    if (now < z->next_nag_ms)
        return;
    log_error("allow-list %s still broken: %ld connections and messages refused in the last minute",
              z->broken_why, z->refused_broken);
    z->refused_broken = 0;
    z->next_nag_ms = now + NAG_EVERY_MS;
}

/* A frame's bytes as a string (cut to size - 1, non-printable bytes as '?'): for logs and comparisons. */
static void frame_text(zmq_msg_t *m, char *out, size_t size)
{
    size_t n = zmq_msg_size(m) < size - 1 ? zmq_msg_size(m) : size - 1;
    const unsigned char *d = zmq_msg_data(m);
    for (size_t i = 0; i < n; i++)
        out[i] = d[i] >= 0x20 && d[i] < 0x7f ? (char)d[i] : '?';
    out[n] = '\0';
}

/* ZMTP metadata of one property: name length (1 byte), name, value length (4 bytes, big-endian), value. */
static size_t metadata(uint8_t *out, const char *name, const char *value)
{
    size_t n = strlen(name), v = strlen(value);
    out[0] = (uint8_t)n;
    memcpy(out + 1, name, n);
    out[n + 1] = (uint8_t)(v >> 24);
    out[n + 2] = (uint8_t)(v >> 16);
    out[n + 3] = (uint8_t)(v >> 8);
    out[n + 4] = (uint8_t)v;
    memcpy(out + n + 5, value, v);
    return n + 5 + v;
}

/* The reply to a request (id: its request id frame, or NULL): version, id, status, text, user id, metadata. */
static void reply(void *sock, zmq_msg_t *id, const char *status, const char *text, const char *user,
                  const char *key)
{
    uint8_t meta[sizeof ZAP_KEY_PROPERTY + KEYS_Z85_LEN + 8];
    size_t meta_len = key ? metadata(meta, ZAP_KEY_PROPERTY, key) : 0;
    int rc = zmq_send(sock, "1.0", 3, ZMQ_SNDMORE) < 0 ||
             zmq_send(sock, id ? zmq_msg_data(id) : "", id ? zmq_msg_size(id) : 0, ZMQ_SNDMORE) < 0 ||
             zmq_send(sock, status, strlen(status), ZMQ_SNDMORE) < 0 ||
             zmq_send(sock, text, strlen(text), ZMQ_SNDMORE) < 0 ||
             zmq_send(sock, user, strlen(user), ZMQ_SNDMORE) < 0 || zmq_send(sock, meta, meta_len, 0) < 0;
    if (rc)
        log_error("zap: cannot reply: %s", zmq_strerror(zmq_errno()));
}

/* Decides on a well-formed CURVE request: accepted when the key is allowed, the list's name its user id. */
static void decide(Zap *z, zmq_msg_t *f)
{
    char key[KEYS_Z85_LEN + 1], address[128], name[KEYS_NAME_MAX + 1] = "";
    zmq_z85_encode(key, zmq_msg_data(&f[6]), KEYS_BIN_LEN);
    frame_text(&f[3], address, sizeof address);
    pthread_mutex_lock(&z->lock);
    reload(z);
    const AllowEntry *e = allow_find_key(&z->list, key);
    if (e)
        memcpy(name, e->name, sizeof name);
    bool broken = z->broken;
    if (broken)
        refused_while_broken(z);
    pthread_mutex_unlock(&z->lock);
    if (broken) {
        reply(z->sock, &f[1], "400", "allow-list unreadable", "", NULL);
        return;
    }
    /*
     * A key's handshakes are bounded as its hellos are: each costs a
     * curve25519 exchange here and a connection's buffers in the ROUTER,
     * and one key opening connections in a loop would have them all.
     */
    char more[NOTES_MORE_MAX];
    if (name[0] && !ratelimit_take(z->handshakes, ratelimit_key(name, strlen(name)), clock_now_ms())) {
        z->handshakes_refused++;
        if (notes_due(&z->refusals, "handshakes per key", more))
            log_warn("zap: refused a CURVE client of %s from %s: over its handshakes a minute (--key-hellos), "
                     "%lld refused so far%s", name, address, (long long)z->handshakes_refused, more);
        reply(z->sock, &f[1], "400", "too many handshakes", "", NULL);
        return;
    }
    if (name[0]) {
        log_info("zap: %s connected from %s", name, address);
        reply(z->sock, &f[1], "200", "OK", name, key);
        return;
    }
    /*
     * One line a minute for all refused keys together (the latest named, the
     * rest counted): anyone who knows the coordinator's public key can make
     * a fresh key per handshake, and a line per key would flood the log.
     */
    if (notes_due(&z->refusals, "a key not in the allow-list", more))
        log_warn("zap: refused a CURVE client from %s: key %s is not in the allow-list %s%s", address, key,
                 z->path, more);
    reply(z->sock, &f[1], "400", "key not allowed", "", NULL);
}

/* Receives a request's frames, the first FRAMES_MAX kept in f (the rest read and dropped). Returns how many kept. */
static int recv_request(void *sock, zmq_msg_t f[FRAMES_MAX])
{
    int n = 0;
    for (bool more = true; more;) {
        zmq_msg_t scratch, *m = n < FRAMES_MAX ? &f[n] : &scratch;
        zmq_msg_init(m);
        if (zmq_msg_recv(m, sock, 0) < 0) {
            zmq_msg_close(m);
            break;
        }
        more = zmq_msg_more(m);
        if (m == &scratch)
            zmq_msg_close(m);
        else
            n++;
    }
    return n;
}

/* Reads one request and answers it: every request gets a reply, or its client's handshake hangs. */
static void serve(Zap *z)
{
    zmq_msg_t f[FRAMES_MAX];
    int n = recv_request(z->sock, f);
    char version[8] = "", mechanism[16] = "";
    if (n >= 1)
        frame_text(&f[0], version, sizeof version);
    if (n >= 6)
        frame_text(&f[5], mechanism, sizeof mechanism);
    if (n == REQUEST_FRAMES && strcmp(version, "1.0") == 0 && strcmp(mechanism, "CURVE") == 0 &&
        zmq_msg_size(&f[6]) == KEYS_BIN_LEN) {
        decide(z, f);
    } else {
        char more[NOTES_MORE_MAX];
        if (notes_due(&z->refusals, "not CURVE 1.0", more))
            log_error("zap: refused a request that is not CURVE 1.0 (%d frames, version '%s', mechanism '%s')%s",
                      n, version, mechanism, more);
        reply(z->sock, n >= 2 ? &f[1] : NULL, "400", "CURVE only", "", NULL);
    }
    for (int i = 0; i < n; i++)
        zmq_msg_close(&f[i]);
}

static void *zap_main(void *arg)
{
    Zap *z = arg;
    while (!atomic_load(&z->stop)) {
        zmq_pollitem_t it = { z->sock, 0, ZMQ_POLLIN, 0 };
        int rc = zmq_poll(&it, 1, POLL_MS);
        if (rc < 0 && zmq_errno() != EINTR) {
            /* no handler answering: libzmq holds CURVE handshakes, so nobody gets in (fails closed) */
            log_error("zap: poll failed, no more CURVE clients accepted: %s", zmq_strerror(zmq_errno()));
            break;
        }
        if (rc > 0)
            serve(z);
    }
    return NULL;
}

/* Starts the thread with every signal blocked: they belong to the main loop. */
static int start_thread(Zap *z)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&z->thread, NULL, zap_main, z);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        log_error("zap: cannot start its thread: %s", strerror(rc));
        return -1;
    }
    z->running = true;
    return 0;
}

Zap *zap_new(void *ctx, const char *allow_path, double per_minute)
{
    Zap *z = calloc(1, sizeof *z);
    if (!z || !(z->path = strdup(allow_path)) || !(z->handshakes = ratelimit_new(per_minute / 60.0, per_minute)) ||
        pthread_mutex_init(&z->lock, NULL) != 0) {
        log_error("zap: out of memory");
        if (z) {
            free(z->path);
            ratelimit_destroy(&z->handshakes);
        }
        free(z);
        return NULL;
    }
    atomic_init(&z->stop, false);
    char err[512];
    z->sig = file_sig(allow_path);
    z->next_check_ms = clock_now_ms() + CHECK_EVERY_MS;
    if (allow_read(allow_path, &z->list, err, sizeof err) != 0) {
        log_error("allow-list %s", err);
        zap_destroy(&z);
        return NULL;
    }
    int linger = 0;
    if (!(z->sock = zmq_socket(ctx, ZMQ_REP)) || zmq_setsockopt(z->sock, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_bind(z->sock, "inproc://zeromq.zap.01") != 0) {
        log_error("zap: cannot bind the ZAP handler: %s", zmq_strerror(zmq_errno()));
        zap_destroy(&z);
        return NULL;
    }
    if (start_thread(z) != 0) {
        zap_destroy(&z);
        return NULL;
    }
    if (!z->list.count)
        log_warn("allow-list %s is empty: every worker is refused until one is allowed (xqf-keys allow)",
                 allow_path);
    return z;
}

void zap_destroy(Zap **zp)
{
    Zap *z = *zp;
    if (!z)
        return;
    if (z->running) {
        atomic_store(&z->stop, true);
        pthread_join(z->thread, NULL);
    }
    if (z->sock)
        zmq_close(z->sock);
    allow_free(&z->list);
    pthread_mutex_destroy(&z->lock);
    ratelimit_destroy(&z->handshakes);
    free(z->path);
    free(z);
    *zp = NULL;
}

bool zap_allows(Zap *z, const char *name, const char *key)
{
    int64_t now = clock_now_ms();
    pthread_mutex_lock(&z->lock);
    if (now >= z->next_check_ms) {
        reload(z);
        z->next_check_ms = now + CHECK_EVERY_MS;
    }
    const AllowEntry *e = allow_find_name(&z->list, name);
    bool ok = !z->broken && e && strcmp(e->key, key) == 0;
    if (z->broken)
        refused_while_broken(z);
    pthread_mutex_unlock(&z->lock);
    return ok;
}
