#include "spec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nnue.h"
#include "search.h"

typedef struct {
    const char *name;
    const char *cmd;
    const char *arg;        /* NULL: none */
    Protocol proto;
    bool ranks_from_one;
    bool he_letters;
    const char *init;
} Preset;

static const Preset PRESETS[] = {
    { "fairy-stockfish", "/usr/games/fairy-stockfish", NULL, PROTO_UCI, true, false,
      "setoption name UCI_Variant value xiangqi" },
    { "sjaakii", "/usr/games/sjaakii", "-uci", PROTO_UCI, true, true,
      "setoption name UCI_Variant value xiangqi" },
    /* our own engine as a program (an engine build), found in PATH unless cmd= says where */
    { "xqf-engine", "xqf-engine", NULL, PROTO_UCI, false, false, NULL },
};
enum { PRESET_COUNT = sizeof PRESETS / sizeof PRESETS[0] };

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Copies text into a fixed field; -1 when it does not fit. */
static int copy_text(char *dst, size_t cap, const char *text)
{
    size_t n = strlen(text);
    if (n >= cap)
        return -1;
    memcpy(dst, text, n + 1);
    return 0;
}

static int add_arg(PlayerSpec *s, const char *text)
{
    if (s->arg_count == SPEC_MAX_ARGS || copy_text(s->args[s->arg_count], SPEC_TEXT_MAX, text) != 0)
        return -1;
    s->arg_count++;
    return 0;
}

static int add_init(PlayerSpec *s, const char *text)
{
    if (s->init_count == SPEC_MAX_INIT || copy_text(s->init[s->init_count], SPEC_TEXT_MAX, text) != 0)
        return -1;
    s->init_count++;
    return 0;
}

/* True when cmd names an executable file (searched in PATH without a '/'). */
static bool executable(const char *cmd)
{
    if (strchr(cmd, '/'))
        return access(cmd, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path)
        return false;
    char full[4096];
    while (*path) {
        size_t len = strcspn(path, ":");
        snprintf(full, sizeof full, "%.*s/%s", (int)(len ? len : 1), len ? path : ".", cmd);
        if (access(full, X_OK) == 0)
            return true;
        path += len + (path[len] == ':');
    }
    return false;
}

static int parse_int(const char *text, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* Applies preset=NAME: the defaults the other keys may override. */
static int apply_preset(PlayerSpec *s, const char *name, char *err, size_t errlen)
{
    for (int i = 0; i < PRESET_COUNT; i++) {
        const Preset *p = &PRESETS[i];
        if (strcmp(p->name, name) != 0)
            continue;
        s->external = true;
        copy_text(s->cmd, sizeof s->cmd, p->cmd);
        if (p->arg)
            add_arg(s, p->arg);
        s->proto = p->proto;
        s->ranks_from_one = p->ranks_from_one;
        s->he_letters = p->he_letters;
        if (p->init)
            add_init(s, p->init);
        return 0;
    }
    return fail(err, errlen, "unknown preset '%s' (known: fairy-stockfish, sjaakii, xqf-engine)", name);
}

/* Applies one key=value word (preset= was handled before). */
static int apply_word(PlayerSpec *s, const char *key, size_t key_len, const char *value,
                      char *err, size_t errlen)
{
#define KEY(k) (key_len == strlen(k) && strncmp(key, k, key_len) == 0)
    int n;
    if (KEY("preset"))
        return 0;
    if (KEY("name"))
        return copy_text(s->name, sizeof s->name, value) == 0 && *value
                   ? 0 : fail(err, errlen, "name: empty or longer than %d characters", SPEC_NAME_MAX - 1);
    if (KEY("cmd")) {
        /* An explicit command replaces a preset's (keeping the preset's other settings). */
        s->external = true;
        return copy_text(s->cmd, sizeof s->cmd, value) == 0 && *value
                   ? 0 : fail(err, errlen, "cmd: empty or too long");
    }
    if (KEY("arg"))
        return add_arg(s, value) == 0 ? 0 : fail(err, errlen, "arg: too many or too long");
    if (KEY("init"))
        return add_init(s, value) == 0 ? 0 : fail(err, errlen, "init: too many or too long");
    if (KEY("proto")) {
        if (strcmp(value, "uci") == 0 || strcmp(value, "ucci") == 0) {
            s->proto = value[2] == 'c' ? PROTO_UCCI : PROTO_UCI;
            return 0;
        }
        return fail(err, errlen, "proto: '%s' is not uci or ucci", value);
    }
    if (KEY("ranks")) {
        if (parse_int(value, 0, 1, &n) != 0)
            return fail(err, errlen, "ranks: '%s' is not 0 (0-9) or 1 (1-10)", value);
        s->ranks_from_one = n == 1;
        return 0;
    }
    if (KEY("letters")) {
        if (strcmp(value, "nb") != 0 && strcmp(value, "he") != 0)
            return fail(err, errlen, "letters: '%s' is not nb or he", value);
        s->he_letters = value[0] == 'h';
        return 0;
    }
    if (KEY("hash")) {
        if (parse_int(value, 1, 65536, &s->hash_mb) != 0)
            return fail(err, errlen, "hash: '%s' is not a size in MB (1-65536)", value);
        return 0;
    }
    if (KEY("threads")) {
        if (parse_int(value, 1, ENGINE_MAX_THREADS, &s->threads) != 0)
            return fail(err, errlen, "threads: '%s' is not a thread count (1-%d)", value, ENGINE_MAX_THREADS);
        return 0;
    }
    if (KEY("params")) {
        if (copy_text(s->params_path, sizeof s->params_path, value) != 0)
            return fail(err, errlen, "params: path too long");
        return params_load(&s->params, value, err, errlen) == 0 ? 0 : -1;
    }
    if (KEY("net")) {
        s->no_net = strcmp(value, "none") == 0;
        if (copy_text(s->net, sizeof s->net, s->no_net ? "" : value) != 0 || (!s->no_net && !*value))
            return fail(err, errlen, "net: empty or path too long");
        return 0;
    }
    if (KEY("netopt"))
        return copy_text(s->net_option, sizeof s->net_option, value) == 0 && *value
                   ? 0 : fail(err, errlen, "netopt: empty or too long");
    if (key_len > 7 && strncmp(key, "option.", 7) == 0) {
        if (s->option_count == SPEC_MAX_OPTIONS)
            return fail(err, errlen, "too many options");
        SpecOption *o = &s->options[s->option_count];
        if (key_len - 7 >= sizeof o->name || copy_text(o->value, sizeof o->value, value) != 0)
            return fail(err, errlen, "option: name or value too long");
        memcpy(o->name, key + 7, key_len - 7);
        o->name[key_len - 7] = '\0';
        s->option_count++;
        return 0;
    }
    return fail(err, errlen, "unknown key '%.*s' (name, cmd, arg, proto, ranks, letters, init, "
                "preset, option.NAME, params, hash, threads, net, netopt)", (int)key_len, key);
#undef KEY
}

/* Built-in options: Hash, Threads or a parameter; checked and applied to s->params now. */
static int apply_builtin_options(PlayerSpec *s, char *err, size_t errlen)
{
    for (int i = 0; i < s->option_count; i++) {
        const SpecOption *o = &s->options[i];
        if (strcmp(o->name, "Hash") == 0) {
            if (parse_int(o->value, 1, 65536, &s->hash_mb) != 0)
                return fail(err, errlen, "option.Hash: '%s' is not a size in MB", o->value);
        } else if (strcmp(o->name, "Threads") == 0) {
            if (parse_int(o->value, 1, ENGINE_MAX_THREADS, &s->threads) != 0)
                return fail(err, errlen, "option.Threads: '%s' is not a thread count (1-%d)", o->value,
                            ENGINE_MAX_THREADS);
        } else if (params_set(&s->params, o->name, o->value, err, errlen) != 0) {
            return -1;
        }
    }
    return 0;
}

/*
 * net=: an external engine is told by options (EvalFile, UseNNUE: the
 * names xqf-engine and the Stockfish family use; netopt= names the file's
 * option of an engine that calls it otherwise), which it judges itself;
 * a built-in engine's file is read now, so that a file the engine would
 * refuse is refused before any game, with the reader's words.
 */
static int apply_net(PlayerSpec *s, char *err, size_t errlen)
{
    if (!s->net[0] && !s->no_net)
        return 0;
    if (s->external) {
        if (s->option_count == SPEC_MAX_OPTIONS)
            return fail(err, errlen, "too many options");
        SpecOption *o = &s->options[s->option_count++];
        copy_text(o->name, sizeof o->name, s->no_net ? "UseNNUE" : s->net_option[0] ? s->net_option : "EvalFile");
        copy_text(o->value, sizeof o->value, s->no_net ? "false" : s->net);
        return 0;
    }
    if (s->no_net)
        return 0;
    NnueNet *net = nnue_load_file(s->net, err, errlen);
    if (!net)
        return -1;
    nnue_destroy(&net);
    return 0;
}

int spec_parse(PlayerSpec *s, int count, char *const words[], int default_hash_mb, char *err,
               size_t errlen)
{
    memset(s, 0, sizeof *s);
    params_default(&s->params);
    char msg[512];
    /* Pass 1: presets; pass 2: everything else, which overrides them. */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < count; i++) {
            const char *eq = strchr(words[i], '=');
            if (!eq)
                return fail(err, errlen, "'%s' is not key=value", words[i]);
            size_t key_len = (size_t)(eq - words[i]);
            int rc = pass == 0
                         ? (key_len == 6 && strncmp(words[i], "preset", 6) == 0
                                ? apply_preset(s, eq + 1, msg, sizeof msg) : 0)
                         : apply_word(s, words[i], key_len, eq + 1, msg, sizeof msg);
            if (rc != 0)
                return fail(err, errlen, "'%s': %s", words[i], msg);
        }
    }
    if (!s->external && apply_builtin_options(s, msg, sizeof msg) != 0)
        return fail(err, errlen, "%s", msg);
    if (s->external && s->params_path[0])
        return fail(err, errlen, "params= is for the built-in engine only");
    if (apply_net(s, msg, sizeof msg) != 0)
        return fail(err, errlen, "'net=%s': %s", s->no_net ? "none" : s->net, msg);
    if (s->external && !executable(s->cmd))
        return fail(err, errlen, "cmd: '%s' is not an executable program", s->cmd);
    if (!s->hash_mb)
        s->hash_mb = default_hash_mb;
    if (!s->name[0]) {
        const char *base = strrchr(s->cmd, '/');
        snprintf(s->name, sizeof s->name, "%.*s", SPEC_NAME_MAX - 1,
                 !s->external ? "xqf" : base ? base + 1 : s->cmd);
    }
    return 0;
}

const char *spec_net_name(const PlayerSpec *s)
{
    if (s->no_net)
        return "none";
    if (!s->net[0])
        return NULL;
    const char *base = strrchr(s->net, '/');
    return base ? base + 1 : s->net;
}
