/*
 * http.h - the dashboard on libmicrohttpd (the only file that includes
 * microhttpd.h): one thread per connection (an event stream blocks in
 * its own thread, waiting for the next event), bounded by a connection
 * limit overall and each client's fair share of it (conn_table.h: an IPv6 /64
 * is one client; behind the trusted proxy, the client it names), event
 * streams apart (at most half the table), an idle timeout, a memory limit
 * for the request head and WEB_BODY_MAX for a body; TLS (GnuTLS, through
 * libmicrohttpd) when a certificate and key are given.
 */
#ifndef XQF_WEB_HTTP_H
#define XQF_WEB_HTTP_H

#include <stddef.h>

#include "web.h"

typedef struct {
    const char *listen;              /* IPv4 or IPv6 address */
    int port;                        /* 0: any free port (http_port tells) */
    const char *cert_pem, *key_pem;  /* TLS: the certificate's and the key's text (kept by the caller until
                                        http_stop); both NULL: plain HTTP */
    int max_connections, per_ip, timeout_s, max_streams, streams_per_ip;   /* conn_table.h: the fair shares */
    const char *trusted_proxy;       /* an IP address whose X-Forwarded-For is believed; NULL: none */
} HttpConfig;

typedef struct Http Http;

/* Starts serving w. NULL with a message in err when the address, the files or the socket fail. */
Http *http_start(Web *w, const HttpConfig *cfg, char *err, size_t errlen);
/* The port bound. */
int http_port(const Http *h);
/* Stops serving (event streams end first: web_destroy's live_stop must come before). Safe twice. */
void http_stop(Http **h);

#endif
