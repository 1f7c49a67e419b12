#include "http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "conn_table.h"
#include "web.h"
#include "web_nets.h"
#include "log.h"

enum { KEEPALIVE_MS = 15000, HEAD_MEMORY = 32 * 1024, DISCARD_MAX = 4 << 20 };

struct Http {
    struct MHD_Daemon *daemon;
    Web *web;
    int port;
    char *trusted_proxy;             /* NULL: X-Forwarded-For is never read */
    char proxy[INET6_ADDRSTRLEN];    /* the trusted proxy's address, canonical; "" none */
    pthread_mutex_t lock;            /* of table */
    ConnTable table;                 /* connections and event streams by client (conn_table.h) */
};

/* A connection's client: its peer's address from its accept, then the client its last request came for. */
typedef struct {
    char client[64];                 /* as handle writes it */
} Peer;

/*
 * What one request collects between the calls of the access handler: a
 * form's body, or a multipart form (the one route that takes a file: a
 * net's upload, POST /nets) read as it comes by libmicrohttpd's post
 * processor into its fields and its file.
 */
typedef struct {
    Buf body;
    size_t received;
    size_t limit;                    /* the body's bytes at most: WEB_BODY_MAX, or a net's upload's */
    bool too_large;
    struct MHD_PostProcessor *pp;    /* a multipart form's reader; NULL for any other body */
    Form fields;                     /* its text fields */
    Buf file;                        /* its file's bytes (the field of a filename) */
    bool file_given;
    bool malformed;                  /* its fields over their limits, or the reader refused the body */
} Upload;

/* An event stream's state. */
typedef struct {
    Http *http;
    char client[64];                 /* counted under it in the table (as handle writes it) */
    WebCursor cursor;
    Buf out;
    size_t off;
} Stream;

static const char *const SECURITY_HEADERS[][2] = {
    { "Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'" },
    { "X-Content-Type-Options", "nosniff" },
    { "Referrer-Policy", "same-origin" },
    { "X-Frame-Options", "DENY" },
};

static enum MHD_Result send_response(struct MHD_Connection *c, int status, struct MHD_Response *r, const char *type,
                                     bool no_store)
{
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    for (size_t i = 0; i < sizeof SECURITY_HEADERS / sizeof SECURITY_HEADERS[0]; i++)
        MHD_add_response_header(r, SECURITY_HEADERS[i][0], SECURITY_HEADERS[i][1]);
    MHD_add_response_header(r, "Cache-Control", no_store ? "no-store" : "max-age=3600");
    /* over TLS, browsers are told to come back over TLS only (HSTS, RFC 6797): no downgrade to plain HTTP */
    if (MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION))
        MHD_add_response_header(r, "Strict-Transport-Security", "max-age=31536000");
    enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return rc;
}

/*
 * One piece of a multipart form's field (libmicrohttpd's MHD_PostDataIterator):
 * a file's bytes to the file (up to the upload's limit: beyond, the request
 * is too large), a text field's to the fields, within request.h's limits.
 */
static enum MHD_Result multipart_field(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                                       const char *content_type, const char *transfer_encoding, const char *data,
                                       uint64_t off, size_t size)
{
    (void)kind, (void)content_type, (void)transfer_encoding;
    Upload *up = cls;
    if (filename) {
        if (up->file_given && off == 0)
            up->malformed = true;    /* one file a form */
        up->file_given = true;
        if (up->file.len + size > up->limit)
            up->too_large = true;
        else
            buf_add(&up->file, data, size);
        return MHD_YES;
    }
    Form *f = &up->fields;
    bool more = off > 0 && f->count > 0 && strcmp(f->name[f->count - 1], key) == 0;
    if (!more && (f->count >= FORM_FIELDS_MAX || strlen(key) > FORM_NAME_MAX)) {
        up->malformed = true;
        return MHD_YES;
    }
    size_t had = more ? strlen(f->value[f->count - 1]) : 0;
    if (had + size > FORM_VALUE_MAX || memchr(data, '\0', size)) {
        up->malformed = true;
        return MHD_YES;
    }
    char *v = realloc(more ? f->value[f->count - 1] : NULL, had + size + 1);
    if (!v)
        return MHD_NO;
    memcpy(v + had, data, size);
    v[had + size] = '\0';
    if (!more) {
        strcpy(f->name[f->count], key);
        f->count++;
    }
    f->value[f->count - 1] = v;
    return MHD_YES;
}

/* A page built in a Buf (taken). */
static enum MHD_Result send_page(struct MHD_Connection *c, WebResponse *rs)
{
    size_t len;
    char *text = buf_take(&rs->body, &len);
    if (!text)
        return MHD_NO;
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    if (rs->cookie[0])
        MHD_add_response_header(r, "Set-Cookie", rs->cookie);
    if (rs->location[0])
        MHD_add_response_header(r, "Location", rs->location);
    if (rs->disposition[0])
        MHD_add_response_header(r, "Content-Disposition", rs->disposition);
    if (rs->close)
        MHD_add_response_header(r, "Connection", "close");
    return send_response(c, rs->status, r, rs->type, true);
}

static enum MHD_Result send_error(struct MHD_Connection *c, int status, const char *reason)
{
    WebResponse rs = { .status = status };
    web_error(&rs, status, reason);
    return send_page(c, &rs);
}

/* ---- event streams --------------------------------------------------------------- */

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    Stream *st = cls;
    while (st->off >= st->out.len) {
        buf_free(&st->out);
        st->off = 0;
        int rc = web_wait(st->http->web, &st->cursor, &st->out, KEEPALIVE_MS);
        if (rc < 0)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (rc == 0)
            buf_puts(&st->out, ": keepalive\n\n");
        if (buf_failed(&st->out))
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    size_t n = st->out.len - st->off < max ? st->out.len - st->off : max;
    memcpy(buf, st->out.data + st->off, n);
    st->off += n;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    Stream *st = cls;
    pthread_mutex_lock(&st->http->lock);
    conns_stream_close(&st->http->table, st->client);
    pthread_mutex_unlock(&st->http->lock);
    buf_free(&st->out);
    free(st);
}

/* An event stream for client, within the streams' own bounds (conn_table.h): beyond them, 503 and the page without. */
static enum MHD_Result send_stream(Http *h, struct MHD_Connection *c, int64_t run, const char *client)
{
    Stream *st = calloc(1, sizeof *st);
    if (!st)
        return MHD_NO;
    pthread_mutex_lock(&h->lock);
    bool open = conns_stream_open(&h->table, client);
    pthread_mutex_unlock(&h->lock);
    if (!open) {
        free(st);
        return send_error(c, 503, "too many live pages are open: the page still works, without live updates");
    }
    st->http = h;
    snprintf(st->client, sizeof st->client, "%s", client);
    st->cursor = web_cursor(h->web, run);
    buf_puts(&st->out, "retry: 2000\n\n");
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, st, stream_free);
    if (!r) {
        stream_free(st);
        return MHD_NO;
    }
    MHD_add_response_header(r, "X-Accel-Buffering", "no");
    return send_response(c, 200, r, "text/event-stream", true);
}

/* ---- requests ----------------------------------------------------------------------- */

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    Form *f = cls;
    if (f->count >= FORM_FIELDS_MAX || strlen(key) > FORM_NAME_MAX)
        return MHD_YES;
    size_t len = value ? strnlen(value, FORM_VALUE_MAX) : 0;
    char *v = malloc(len + 1);
    if (!v)
        return MHD_NO;
    memcpy(v, value ? value : "", len);
    v[len] = '\0';
    strcpy(f->name[f->count], key);
    f->value[f->count++] = v;
    return MHD_YES;
}

/* An address as text ("" when it is neither IPv4 nor IPv6). */
static void address_text(const struct sockaddr *sa, char *out, size_t size)
{
    out[0] = '\0';
    if (!sa)
        return;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)size);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, (socklen_t)size);
}

/* The TCP peer's address. */
static void peer_address(struct MHD_Connection *c, char *out, size_t size)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    address_text(ci ? ci->client_addr : NULL, out, size);
}

/* Keeps the value of the last X-Forwarded-For header (a proxy may add a line of its own after the client's). */
static enum MHD_Result last_forwarded(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    if (strcasecmp(key, "X-Forwarded-For") == 0)
        *(const char **)cls = value;
    return MHD_YES;
}

/* The client's address: the TCP peer's, or the address a trusted proxy says it forwarded for (request_client). */
static void client_address(Http *h, struct MHD_Connection *c, char *out, size_t size)
{
    char peer[64];
    peer_address(c, peer, sizeof peer);
    const char *forwarded = NULL;
    if (h->trusted_proxy)
        MHD_get_connection_values(c, MHD_HEADER_KIND, last_forwarded, &forwarded);
    request_client(peer, h->trusted_proxy, forwarded, out, size);
}

/*
 * The connection table's door (conn_table.h), at accept: before any byte is
 * read, only the TCP peer is known, so a connection is counted under its
 * peer's address.  The trusted proxy's connections carry every client's
 * requests: they are held to the table's size only here, and each request's
 * head moves its connection to the client the proxy names (client_moved).
 * Called on the daemon's thread, then notified (NOTIFY_STARTED) before the
 * next accept: the counts it reads are those of every connection before.
 */
static enum MHD_Result admit(void *cls, const struct sockaddr *sa, socklen_t len)
{
    (void)len;
    Http *h = cls;
    char peer[INET6_ADDRSTRLEN];
    address_text(sa, peer, sizeof peer);
    pthread_mutex_lock(&h->lock);
    bool go = h->proxy[0] && strcmp(peer, h->proxy) == 0 ? h->table.conns < h->table.max
                                                          : conns_may_open(&h->table, peer);
    int held = conns_held(&h->table, peer);
    pthread_mutex_unlock(&h->lock);
    if (!go)
        log_debug("http: %s refused: it holds %d connections, its share of the free ones", peer, held);
    return go ? MHD_YES : MHD_NO;
}

/* Counts a connection in the table from its start to its end (paired by libmicrohttpd, a failed start too). */
static void notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                              enum MHD_ConnectionNotificationCode code)
{
    Http *h = cls;
    Peer *p = *socket_context;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        if (!(p = calloc(1, sizeof *p)))
            return;                  /* uncounted: the table only errs towards letting it in */
        peer_address(c, p->client, sizeof p->client);
        *socket_context = p;
    }
    if (!p)
        return;
    pthread_mutex_lock(&h->lock);
    conns_count(&h->table, p->client, code == MHD_CONNECTION_NOTIFY_STARTED ? +1 : -1);
    pthread_mutex_unlock(&h->lock);
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        free(p);
        *socket_context = NULL;
    }
}

/*
 * A request's head came for client: its connection is now that client's
 * (behind the trusted proxy, one connection carries many clients' requests
 * in turn).  Whether it fits that client's share; when not, the request is
 * answered 503 and the connection closed.
 */
static bool client_moved(Http *h, struct MHD_Connection *c, const char *client)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    Peer *p = ci ? ci->socket_context : NULL;
    if (!p || strcmp(p->client, client) == 0)
        return true;
    pthread_mutex_lock(&h->lock);
    bool fits = conns_move(&h->table, p->client, client) || strcmp(client, h->proxy) == 0;   /* the proxy's own */
    pthread_mutex_unlock(&h->lock);
    snprintf(p->client, sizeof p->client, "%s", client);
    return fits;
}


static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state)
{
    (void)version;
    Http *h = cls;
    Upload *up = *state;
    if (!up) {                       /* the head: check what the body will be before it comes */
        if (!(up = calloc(1, sizeof *up)))
            return MHD_NO;
        *state = up;
        char who[64];
        client_address(h, c, who, sizeof who);
        if (!client_moved(h, c, who)) {
            WebResponse rs = { .status = 503, .close = true };
            web_error(&rs, 503, "this address holds its share of the server's connections: close some, or "
                      "try again in a moment");
            return send_page(c, &rs);
        }
        /*
         * A net's upload is the one body past a form's 64 KiB: a multipart
         * form of a net file (the net format's own size at most) and its
         * fields; every other body, and any other type there, keeps a form's.
         */
        const char *head_type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
        up->limit = WEB_BODY_MAX;
        if (strcmp(method, "POST") == 0 && route_parse(url).kind == ROUTE_NETS && head_type &&
            strncasecmp(head_type, "multipart/form-data", 19) == 0) {
            /* the visitor's right first: a viewer's 4 MB is refused before a byte of it is read */
            WebResponse refused = { .status = 200 };
            if (web_head_admits(h->web, url, MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "xqf_session"),
                                &refused) != 0) {
                refused.close = true;
                return send_page(c, &refused);
            }
            buf_free(&refused.body);
            up->limit = (size_t)web_net_max();
            if (!(up->pp = MHD_create_post_processor(c, 64 * 1024, multipart_field, up)))
                return send_error(c, 400, "the multipart form has no boundary");
        }
        const char *length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (length && strtoull(length, NULL, 10) > up->limit + (up->pp ? WEB_BODY_MAX : 0))
            up->too_large = true;
        else
            return MHD_YES;
    }
    if (*upload_size) {              /* a body without Content-Length (chunked) that grows too large is */
        up->received += *upload_size; /* discarded up to DISCARD_MAX, then answered 413, else cut off */
        if (up->pp && !up->too_large && !up->malformed) {
            if (up->received > up->limit + WEB_BODY_MAX)
                up->too_large = true;
            else if (MHD_post_process(up->pp, upload, *upload_size) != MHD_YES)
                up->malformed = true;
        } else if (!up->pp && up->body.len + *upload_size > WEB_BODY_MAX)
            up->too_large = true;
        else if (!up->pp)
            buf_add(&up->body, upload, *upload_size);
        *upload_size = 0;
        return up->received > (up->pp ? up->limit : 0) + DISCARD_MAX ? MHD_NO : MHD_YES;
    }
    if (up->too_large && up->pp) {
        char text[160];
        snprintf(text, sizeof text, "the upload is larger than a net file may be (%zu bytes, the net format's own "
                 "size)", up->limit);
        return send_error(c, 413, text);
    }
    if (up->too_large)
        return send_error(c, 413, "the request is larger than the 64 KiB a form may be");
    if (up->pp) {
        /* the reader's end: a body cut short or of a bad frame is refused here, before anything is stored */
        bool complete = MHD_destroy_post_processor(up->pp) == MHD_YES;
        up->pp = NULL;
        if (!complete || up->malformed)
            return send_error(c, 400, "the multipart form is malformed or cut short (its fields at most 64 of "
                                      "8 KiB each, one file)");
    }
    bool is_post = strcmp(method, "POST") == 0;
    const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    bool multipart = up->fields.count || up->file_given;
    if (is_post && !multipart && up->body.len && (!type || strncmp(type, "application/x-www-form-urlencoded", 33) != 0))
        return send_error(c, 415, "a form must be sent as application/x-www-form-urlencoded");
    Form query, form;
    const char *why = NULL;
    memset(&query, 0, sizeof query);
    if (multipart) {
        form = up->fields;           /* handed over: freed below, with the request's */
        memset(&up->fields, 0, sizeof up->fields);
    } else if (form_decode(&form, up->body.data ? up->body.data : "", up->body.len, &why) != 0) {
        form_free(&form);
        char text[128];
        snprintf(text, sizeof text, "the form is malformed: %s", why);
        return send_error(c, 400, text);
    }
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_arg, &query);
    char client[64];
    client_address(h, c, client, sizeof client);
    WebRequest rq = { .method = method, .path = url, .query = &query, .form = &form, .client = client,
                      .session = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "xqf_session"),
                      .login_nonce = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "xqf_login"),
                      .file = up->file_given ? (const uint8_t *)(up->file.data ? up->file.data : "") : NULL,
                      .file_len = up->file.len };
    WebResponse rs = { .status = 200 };
    web_handle(h->web, &rq, &rs);
    form_free(&query);
    form_free(&form);
    if (rs.events_run >= 0) {
        buf_free(&rs.body);
        return send_stream(h, c, rs.events_run, client);
    }
    if (rs.static_body) {
        buf_free(&rs.body);
        struct MHD_Response *r = MHD_create_response_from_buffer(rs.static_len, (void *)rs.static_body,
                                                                 MHD_RESPMEM_PERSISTENT);
        return send_response(c, rs.status, r, rs.type, false);
    }
    return send_page(c, &rs);
}

static void completed(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode code)
{
    (void)cls, (void)c, (void)code;
    Upload *up = *state;
    if (up) {
        if (up->pp)
            MHD_destroy_post_processor(up->pp);
        form_free(&up->fields);
        buf_free(&up->file);
        buf_free(&up->body);
        free(up);
    }
    *state = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    log_debug("http: %s", line);     /* clients going away, bad requests: not the server's trouble */
}

/* ---- the daemon ------------------------------------------------------------------------- */

Http *http_start(Web *w, const HttpConfig *cfg, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (inet_pton(AF_INET, cfg->listen, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)cfg->port);
    } else if (inet_pton(AF_INET6, cfg->listen, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)cfg->port);
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(err, errlen, "--listen: '%s' is not an IPv4 or IPv6 address", cfg->listen);
        return NULL;
    }
    Http *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    h->web = w;
    pthread_mutex_init(&h->lock, NULL);
    if (conns_init(&h->table, cfg->max_connections, cfg->per_ip, cfg->max_streams, cfg->streams_per_ip) != 0) {
        snprintf(err, errlen, "out of memory, or --max-streams over half of --max-connections");
        http_stop(&h);
        return NULL;
    }
    if (cfg->trusted_proxy) {
        unsigned char bin[sizeof(struct in6_addr)];
        int family = strchr(cfg->trusted_proxy, ':') ? AF_INET6 : AF_INET;
        if (inet_pton(family, cfg->trusted_proxy, bin) == 1)
            inet_ntop(family, bin, h->proxy, sizeof h->proxy);
    }
    if (cfg->trusted_proxy && !(h->trusted_proxy = strdup(cfg->trusted_proxy))) {
        snprintf(err, errlen, "out of memory");
        http_stop(&h);
        return NULL;
    }
    if (cfg->cert_pem && cfg->key_pem)
        flags |= MHD_USE_TLS;
    struct MHD_OptionItem tls[] = {
        { flags & MHD_USE_TLS ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)cfg->cert_pem },
        { MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)cfg->key_pem },
        { MHD_OPTION_END, 0, NULL },
    };
    h->daemon = MHD_start_daemon(flags, (uint16_t)cfg->port, admit, h, handle, h,
                                 MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
                                 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections,
                                 MHD_OPTION_NOTIFY_CONNECTION, notify_connection, h,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->timeout_s,
                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HEAD_MEMORY,
                                 MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                                 MHD_OPTION_ARRAY, tls,
                                 MHD_OPTION_END);
    if (!h->daemon) {
        snprintf(err, errlen, "cannot serve on %s port %d (in use, or a bad certificate or key)", cfg->listen,
                 cfg->port);
        http_stop(&h);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    h->port = di ? di->port : cfg->port;
    return h;
}

int http_port(const Http *h) { return h->port; }

void http_stop(Http **hp)
{
    Http *h = *hp;
    if (!h)
        return;
    if (h->daemon)
        MHD_stop_daemon(h->daemon);
    free(h->trusted_proxy);
    conns_free(&h->table);
    pthread_mutex_destroy(&h->lock);
    free(h);
    *hp = NULL;
}
