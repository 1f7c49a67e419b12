#include "conn_table.h"

#include <stdlib.h>
#include <string.h>

enum { SHARE_FLOOR = 2 };            /* a client's share when the table is nearly full: a page and its stream */

int conns_init(ConnTable *t, int max, int per_client, int streams_max, int streams_per_client)
{
    memset(t, 0, sizeof *t);
    if (max < 1 || per_client < 1 || streams_max < 0 || streams_max > max / 2 || streams_per_client < 1)
        return -1;
    if (!(t->slots = calloc((size_t)max, sizeof *t->slots)))
        return -1;
    t->size = t->max = max;
    t->per_client = per_client;
    t->streams_max = streams_max;
    t->streams_per_client = streams_per_client;
    return 0;
}

void conns_free(ConnTable *t)
{
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static ConnSlot *find(const ConnTable *t, const char *address)
{
    char key[LIMIT_KEY_MAX + 1];
    login_address_key(address, key);
    for (int i = 0; i < t->size; i++)
        if (t->slots[i].key[0] && strcmp(t->slots[i].key, key) == 0)
            return &t->slots[i];
    return NULL;
}

/* address's slot, taken when absent; NULL when none is free (more clients than places: a bug of the caller's). */
static ConnSlot *take(ConnTable *t, const char *address)
{
    ConnSlot *s = find(t, address);
    for (int i = 0; !s && i < t->size; i++)
        if (!t->slots[i].key[0]) {
            s = &t->slots[i];
            login_address_key(address, s->key);
        }
    return s;
}

static void release_if_empty(ConnSlot *s)
{
    if (s->conns <= 0 && s->streams <= 0)
        memset(s, 0, sizeof *s);
}

/* A client's fair share of cap places of which used are taken by clients others (the asker not among them). */
static int share(int cap, int per_client, int used, int clients)
{
    int free_places = cap - used, fair = free_places / (clients + 1);
    fair = fair > SHARE_FLOOR ? fair : SHARE_FLOOR;
    return fair < per_client ? fair : per_client;
}

int conns_held(const ConnTable *t, const char *address)
{
    const ConnSlot *s = find(t, address);
    return s ? s->conns : 0;
}

bool conns_may_open(const ConnTable *t, const char *address)
{
    const ConnSlot *s = find(t, address);
    int held = s ? s->conns : 0;
    int others = t->clients - (held > 0);
    return t->conns < t->max && held < share(t->max, t->per_client, t->conns, others);
}

void conns_count(ConnTable *t, const char *address, int delta)
{
    ConnSlot *s = delta > 0 ? take(t, address) : find(t, address);
    if (!s || (delta < 0 && s->conns <= 0))
        return;
    t->clients += (s->conns == 0 && delta > 0) - (s->conns + delta == 0 && delta < 0);
    s->conns += delta;
    t->conns += delta;
    release_if_empty(s);
}

bool conns_move(ConnTable *t, const char *from, const char *to)
{
    char a[LIMIT_KEY_MAX + 1], b[LIMIT_KEY_MAX + 1];
    login_address_key(from, a);
    login_address_key(to, b);
    if (strcmp(a, b) == 0)
        return true;
    /* the connection is counted already: the free places are as they would be with it gone from from */
    const ConnSlot *s = find(t, to);
    int held = s ? s->conns : 0;
    int others = t->clients - (held > 0);
    bool fits = held < share(t->max, t->per_client, t->conns - 1, others);
    conns_count(t, from, -1);
    conns_count(t, to, +1);
    return fits;
}

bool conns_stream_open(ConnTable *t, const char *address)
{
    ConnSlot *s = take(t, address);
    if (!s)
        return false;
    int others = t->stream_clients - (s->streams > 0);
    if (t->streams >= t->streams_max || s->streams >= share(t->streams_max, t->streams_per_client, t->streams, others)) {
        release_if_empty(s);
        return false;
    }
    t->stream_clients += s->streams == 0;
    s->streams++;
    t->streams++;
    return true;
}

void conns_stream_close(ConnTable *t, const char *address)
{
    ConnSlot *s = find(t, address);
    if (!s || s->streams <= 0)
        return;
    t->stream_clients -= s->streams == 1;
    s->streams--;
    t->streams--;
    release_if_empty(s);
}
