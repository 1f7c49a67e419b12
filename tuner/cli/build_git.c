/*
 * build_git.c - xqf-tune build --ref: a git commit resolved, exported
 * into a clean folder and built in the sandbox (ours by its CMake,
 * another engine's by its record), benched and registered; and what show
 * says of a run's builds.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "board.h"
#include "build_internal.h"
#include "clock.h"
#include "codec.h"
#include "external.h"
#include "fen.h"
#include "files.h"
#include "log.h"
#include "run_rules.h"
#include "store_engines.h"

enum { GIT_OUT_MAX = 1 << 16, LOG_TAIL_LINES = 25, LOG_TAIL_READ = 1 << 16 };

/* Runs git -C repo args... (NULL-terminated, at most 8), stdout into out (its last newline cut). Git's exit status. */
static int git(const char *repo, const BuildLog *log, char *out, size_t size, const char *const *args)
{
    char *argv[12] = { "git", "-C", (char *)repo };
    int n = 3;
    for (int i = 0; args[i] && n < 11; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    int rc = build_spawn(argv, log, out, size, NULL);
    size_t len = strlen(out);
    if (len && out[len - 1] == '\n')
        out[len - 1] = '\0';
    return rc;
}

/*
 * The last lines of a build log, read from its descriptor (never by path
 * again), on stderr and their last bytes into g->log_tail: text the
 * branch's build wrote.  On stderr each line goes through cli_shown
 * (control bytes escaped: no log moves the cursor or retitles the window
 * of the operator who reads it); into g->log_tail, which the run's page
 * (HTML-escaped there) and `show` give anyone, each line as PostgreSQL's
 * text takes it (xqf_text_sanitize: well-formed UTF-8, no control
 * character), so that a tail of bytes the database refuses cannot keep a
 * failed request from being recorded.
 */
static void print_tail(const BuildLog *log, CliGitRef *g)
{
    struct stat st;
    char *text = malloc(LOG_TAIL_READ + 1), *clean = malloc(LOG_TAIL_READ + 2);
    ssize_t got = text && clean && fstat(log->fd, &st) == 0
                      ? pread(log->fd, text, LOG_TAIL_READ, st.st_size > LOG_TAIL_READ ? st.st_size - LOG_TAIL_READ : 0)
                      : -1;
    size_t len = got > 0 ? (size_t)got : 0, start = len, n = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\0')
            text[i] = ' ';    /* a NUL would end the line early */
    for (int lines = 0; start > 0 && lines <= LOG_TAIL_LINES; start--)
        if (text[start - 1] == '\n' && start != len)
            lines++;
    if (got >= 0) {
        fputs("--- the end of the build log ---\n", stderr);
        for (char *line = text + start; line < text + len;) {
            char *nl = memchr(line, '\n', (size_t)(text + len - line));
            size_t cut = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
            line[cut] = '\0';
            fprintf(stderr, "%s\n", cli_shown(line));
            n += xqf_text_sanitize(clean + n, LOG_TAIL_READ + 1 - n, line);
            clean[n++] = '\n';
            line += cut + 1;
        }
        fputs("--- end ---\n", stderr);
        /* the last bytes, from a character's first byte on */
        size_t keep = n < sizeof g->log_tail ? n : sizeof g->log_tail - 1;
        while (keep > 0 && ((unsigned char)clean[n - keep] & 0xc0) == 0x80)
            keep--;
        snprintf(g->log_tail, sizeof g->log_tail, "%.*s", (int)keep, clean + n - keep);
    }
    free(text);
    free(clean);
}

/* The N of the last "Bench: N" line of a commit message, or 0. */
static int64_t bench_line(const char *message)
{
    int64_t found = 0, v;
    for (const char *line = message; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *p = line + strspn(line, " \t");
        if (strncmp(p, "Bench:", 6) == 0 && sscanf(p + 6, " %" SCNd64, &v) == 1 && v > 0)
            found = v;
    }
    return found;
}

/* Removes a temporary folder and what it holds. */
static void remove_tree(const char *dir)
{
    char *rm[] = { "rm", "-rf", (char *)dir, NULL };
    build_spawn(rm, NULL, NULL, 0, NULL);
}

int cli_engine_load(Store *s, const char *option, const char *name, EngineRecord *e)
{
    int found = store_engine_load(s, name, e);
    if (found < 0)
        return cli_fail(CLI_FAIL, "cannot read the engines");
    return found ? CLI_OK : cli_fail(CLI_USAGE, "%s: no engine named '%s' (xqf-tune engine list)", option, name);
}

/*
 * Where another engine's repository is read: its record's folder in place,
 * or (a URL) a mirror of it in cache/NAME.git, cloned the first time and
 * fetched again each time (a branch moves).  Into g->repo.  Exit status.
 */
static int engine_repo(const EngineRecord *e, const char *cache, CliGitRef *g)
{
    struct stat st;
    if (stat(e->repo, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(g->repo, sizeof g->repo, "%s", e->repo);
        return CLI_OK;
    }
    if (!build_path_fmt(g->repo, sizeof g->repo, "%s/%s.git", cache, e->name))
        return cli_fail(CLI_USAGE, "'%s': path too long", cache);
    if (files_make_dirs(cache) != 0)
        return cli_fail(CLI_FAIL, "cannot create '%s': %s", cache, strerror(errno));
    char out[256];
    bool have = stat(g->repo, &st) == 0;
    char *clone[] = { "git", "clone", "--quiet", "--mirror", "--", (char *)e->repo, g->repo, NULL };
    int rc = have ? git(g->repo, NULL, out, sizeof out, (const char *[]){ "fetch", "--quiet", "--prune", NULL })
                  : build_spawn(clone, NULL, out, sizeof out, NULL);
    if (rc != 0)
        return cli_fail(CLI_USAGE, "engine %s: its repository '%s' cannot be fetched (git %s failed)", e->name,
                        e->repo, have ? "fetch" : "clone");
    return CLI_OK;
}

int cli_git_resolve(Store *s, const char *repo, const char *ref, const char *net, const EngineRecord *engine,
                    const char *cache, CliGitRef *g)
{
    char *out = malloc(GIT_OUT_MAX), spec[CLI_GIT_REF_MAX + 16], path[PATH_MAX];
    memset(g, 0, sizeof *g);
    g->engine = engine;
    int status = out ? CLI_OK : cli_fail(CLI_FAIL, "out of memory");
    if (status == CLI_OK && net && engine)
        status = cli_fail(CLI_USAGE, "--net: a net is compiled into our engine only (engine %s)", engine->name);
    if (status == CLI_OK && net)
        status = cli_net_lookup(s, "--net", net, &g->net);
    if (status == CLI_OK && engine && (status = engine_repo(engine, cache, g)) == CLI_OK)
        repo = g->repo;
    else if (!engine)
        snprintf(g->repo, sizeof g->repo, "%s", repo);
    snprintf(g->ref, sizeof g->ref, "%s", ref);
    snprintf(spec, sizeof spec, "%s^{commit}", ref);
    struct stat st;
    char why[512];
    if (status == CLI_OK && !rule_git_ref(ref, why, sizeof why))
        status = cli_fail(CLI_USAGE, "%s", why);
    else if (status == CLI_OK && (stat(repo, &st) != 0 || !S_ISDIR(st.st_mode)))
        status = cli_fail(CLI_USAGE, "--repo: '%s' is not a folder", repo);
    else if (status == CLI_OK && git(repo, NULL, out, GIT_OUT_MAX,
                                     (const char *[]){ "rev-parse", "--git-dir", NULL }) != 0)
        status = cli_fail(CLI_USAGE, "--repo: '%s' is not a git repository", repo);
    else if (status == CLI_OK && (git(repo, NULL, out, GIT_OUT_MAX,
                                      (const char *[]){ "rev-parse", "--verify", "--quiet", spec, NULL }) != 0 ||
                                  strlen(out) >= sizeof g->commit))
        status = cli_fail(CLI_USAGE, "unknown ref '%s' in %s", ref, repo);
    if (status == CLI_OK) {
        snprintf(g->commit, sizeof g->commit, "%s", out);
        for (int i = 0; status == CLI_OK && !engine && i < 2; i++) {
            const char *file = i ? "CMakeLists.txt" : "engine/params.def";
            snprintf(path, sizeof path, "%s:%s", g->commit, file);
            if (git(repo, NULL, out, GIT_OUT_MAX, (const char *[]){ "cat-file", "-e", path, NULL }) != 0)
                status = cli_fail(CLI_USAGE, "'%s' at %.12s is not this project's source (no %s)", repo,
                                  g->commit, file);
        }
    }
    snprintf(spec, sizeof spec, "%s^{tree}", g->commit);
    if (status == CLI_OK && (git(repo, NULL, out, GIT_OUT_MAX, (const char *[]){ "rev-parse", spec, NULL }) != 0 ||
                             strlen(out) >= sizeof g->tree))
        status = cli_fail(CLI_FAIL, "cannot read the tree of %s", g->commit);
    if (status == CLI_OK)
        snprintf(g->tree, sizeof g->tree, "%s", out);
    if (status == CLI_OK &&
        git(repo, NULL, out, GIT_OUT_MAX, (const char *[]){ "log", "-1", "--format=%B", g->commit, NULL }) != 0)
        status = cli_fail(CLI_FAIL, "cannot read the message of %s", g->commit);
    if (status == CLI_OK) {
        snprintf(g->subject, sizeof g->subject, "%.*s", (int)strcspn(out, "\n"), out);
        /* a commit's Bench: line is its search with its own default net: another net compiled in changes it */
        g->want_bench = g->net.id ? 0 : bench_line(out);
        if (git(repo, NULL, out, GIT_OUT_MAX, (const char *[]){ "log", "-1", "--format=%cI", g->commit, NULL }) != 0 ||
            strlen(out) >= sizeof g->date)
            status = cli_fail(CLI_FAIL, "cannot read the date of %s", g->commit);
        else
            snprintf(g->date, sizeof g->date, "%s", out);
    }
    if (status == CLI_OK) {
        /* ours only: another engine's tree may be built otherwise than the build found was */
        int found = engine ? 0 : store_build_of_tree(s, g->tree, g->net.id, &g->reuse);
        if (found < 0)
            status = cli_fail(CLI_FAIL, "cannot read the builds");
        else if (found == 0)
            g->reuse = 0;
        printf("Commit: %s %s\nTree: %s\n", g->commit, cli_shown(g->subject), g->tree);
        if (g->net.id)
            printf("Net: %s (SHA-256 %s)\n", cli_shown(g->net.name), g->net.sha256);
        fflush(stdout);
    }
    free(out);
    return status;
}

/* Exports commit g of its repository into box/src through tmp/src.tar (log in log). Exit status. */
static int git_export(const CliGitRef *g, const char *tmp, const char *box, const BuildLog *log)
{
    char tar[PATH_MAX], src[PATH_MAX], out[64];
    if (!build_path_fmt(tar, sizeof tar, "%s/src.tar", tmp) || !build_path_fmt(src, sizeof src, "%s/src", box) ||
        files_make_dirs(src) != 0)
        return cli_fail(CLI_FAIL, "cannot make the build folder in %s", tmp);
    if (git(g->repo, log, out, sizeof out,
            (const char *[]){ "archive", "--format=tar", "-o", tar, g->commit, NULL }) != 0)
        return cli_fail(CLI_FAIL, "git archive of %.12s failed (see above)", g->commit);
    char *untar[] = { "tar", "-xf", tar, "-C", src, NULL };
    if (build_spawn(untar, log, NULL, 0, NULL) != 0)
        return cli_fail(CLI_FAIL, "cannot unpack the source of %.12s", g->commit);
    unlink(tar);
    return CLI_OK;
}

/* Exports commit g into box/src and builds its xqf-engine in box/build (log in log). Exit status. */
static int git_compile(CliGitRef *g, const char *tmp, const char *box, const BuildLog *log, int64_t jobs)
{
    char src[PATH_MAX], dir[PATH_MAX], jobs_text[24];
    int status = git_export(g, tmp, box, log);
    if (status != CLI_OK)
        return status;
    if (!build_path_fmt(src, sizeof src, "%s/src", box) || !build_path_fmt(dir, sizeof dir, "%s/build", box))
        return cli_fail(CLI_FAIL, "cannot make the build folder in %s", box);
    snprintf(jobs_text, sizeof jobs_text, "%" PRId64, jobs);
    char def_net[CLI_PATH_MAX + 32];
    snprintf(def_net, sizeof def_net, "-DXQF_DEFAULT_NET=%s", g->net.path);
    char *configure[] = { "cmake", "-S", src, "-B", dir, "-DCMAKE_BUILD_TYPE=Release", "-DXQF_TESTS=OFF",
                          g->net.id ? def_net : NULL, NULL };
    char *build[] = { "cmake", "--build", dir, "--target", "xqf-engine", "-j", jobs_text, NULL };
    /*
     * The branch's CMake runs whatever its tree says: configure and compile
     * in a box that sees the system's /usr and the box folder only, as
     * nobody, with no network, no environment and limits (sandbox.h); the
     * net to compile in, read-only (its folder bound so): what it embeds is
     * the registered file.  The log is beside the box folder, not in it.
     */
    SandboxSpec sb = { .rw = { box }, .ro = { g->net.id ? g->net.dir : NULL }, .chdir = box };
    char why[256];
    if (!sandbox_program(why, sizeof why))
        return cli_fail(CLI_FAIL, "commit %.12s not built: no sandbox to build it in: %s", g->commit, why);
    fprintf(stderr, "xqf-tune: building xqf-engine of %.12s (%s) in %s, in a sandbox\n", g->commit, g->ref, dir);
    if (build_spawn(configure, log, NULL, 0, &sb) != 0 || build_spawn(build, log, NULL, 0, &sb) != 0) {
        print_tail(log, g);
        return cli_fail(CLI_USAGE, "commit %.12s (%s) does not build: nothing recorded", g->commit, g->ref);
    }
    return CLI_OK;
}

/* text with every "<key>" replaced by value, into out. false when it does not fit. */
static bool expand(const char *text, const char *key, const char *value, char *out, size_t size)
{
    size_t n = 0, klen = strlen(key), vlen = strlen(value);
    for (const char *p = text; *p;) {
        bool at = strncmp(p, key, klen) == 0;
        size_t len = at ? vlen : 1;
        if (n + len >= size)
            return false;
        memcpy(out + n, at ? value : p, len);
        n += len;
        p += at ? klen : 1;
    }
    out[n] = '\0';
    return true;
}

/*
 * Another engine's commit, exported into box/src, built by its record in
 * the sandbox: its build command (<out> replaced by box/out/NAME) run by
 * sh at the tree's root, or its CMake target configured and built in
 * box/build; its binary (<out>, or a path in the tree or the build folder)
 * into built (taken out of box by the caller).  Exit status: CLI_USAGE
 * with the log's tail when it does not build.
 */
static int engine_compile(CliGitRef *g, const char *tmp, const char *box, const BuildLog *log, int64_t jobs,
                          char *built, size_t size)
{
    const EngineRecord *e = g->engine;
    char src[PATH_MAX], dir[PATH_MAX], outdir[PATH_MAX], want[PATH_MAX], command[ENGINE_TEXT_MAX * 8];
    char binary[PATH_MAX], jobs_text[24];
    int status = git_export(g, tmp, box, log);
    if (status != CLI_OK)
        return status;
    snprintf(jobs_text, sizeof jobs_text, "%" PRId64, jobs);
    if (!build_path_fmt(src, sizeof src, "%s/src", box) || !build_path_fmt(dir, sizeof dir, "%s/build", box) ||
        !build_path_fmt(outdir, sizeof outdir, "%s/out", box) || !build_path_fmt(want, sizeof want, "%s/%s", outdir, e->name) ||
        files_make_dirs(outdir) != 0)
        return cli_fail(CLI_FAIL, "cannot make the build folder in %s", box);
    bool cmake = e->cmake_target[0] != '\0';
    if (!expand(cmake ? "" : e->build_command, "<out>", want, command, sizeof command) ||
        !expand(e->binary, "<out>", want, binary, sizeof binary) ||
        !build_path_fmt(built, size, "%s%s%s", binary[0] == '/' ? "" : cmake ? dir : src, binary[0] == '/' ? "" : "/",
                  binary))
        return cli_fail(CLI_USAGE, "engine %s: its build command or binary is too long", e->name);
    char *shell[] = { "sh", "-c", command, NULL };
    char *configure[] = { "cmake", "-S", src, "-B", dir, "-DCMAKE_BUILD_TYPE=Release", NULL };
    char *target[] = { "cmake", "--build", dir, "--target", (char *)e->cmake_target, "-j", jobs_text, NULL };
    SandboxSpec sb = { .rw = { box }, .chdir = src };
    fprintf(stderr, "xqf-tune: building engine %s at %.12s (%s) in %s, in a sandbox\n", e->name, g->commit, g->ref,
            src);
    int rc = cmake ? build_spawn(configure, log, NULL, 0, &sb) || build_spawn(target, log, NULL, 0, &sb)
                   : build_spawn(shell, log, NULL, 0, &sb);
    if (rc != 0) {
        print_tail(log, g);
        return cli_fail(CLI_USAGE, "commit %.12s (%s) of engine %s does not build: nothing recorded", g->commit,
                        g->ref, e->name);
    }
    return CLI_OK;
}

/*
 * Another engine's bench, in the sandbox: its record's command with
 * <binary> replaced, run by sh, its nodes and speed read by the record's
 * regexes (engine_record_bench) from its stdout and stderr together
 * (Stockfish and Pikafish print "Nodes searched" on stderr) into
 * g->bench, printed.  Exit status: CLI_USAGE with the log's tail when it
 * fails or cannot be read.
 */
static int engine_bench(CliGitRef *g, const BuildLog *log)
{
    const EngineRecord *e = g->engine;
    char command[ENGINE_TEXT_MAX * 8], why[256];
    if (!expand(e->bench_command, "<binary>", g->binary, command, sizeof command))
        return cli_fail(CLI_USAGE, "engine %s: its bench command is too long", e->name);
    char *out = malloc(BENCH_OUT_MAX), *shell[] = { "sh", "-c", command, NULL };
    SandboxSpec box = { .ro = { g->binary } };
    int64_t nps = 0;
    int rc = out ? build_spawn_io(shell, log, out, BENCH_OUT_MAX, &box, true) : -1;
    bool read = rc == 0 && engine_record_bench(e, out, &g->bench, &nps, why, sizeof why) == 0;
    if (rc == 0 && !read)
        dprintf(log->fd, "%s\n--- the bench: %s\n", out, why);
    free(out);
    if (!read) {
        print_tail(log, g);
        return cli_fail(CLI_USAGE, "engine %s: the bench of %.12s (%s) %s: nothing recorded", e->name, g->commit,
                        g->ref, rc != 0 ? "failed" : why);
    }
    printf("Bench: %" PRId64 "\nSpeed: %" PRId64 " nodes/s\n", g->bench, nps);
    return CLI_OK;
}

/* How long one search of an engine's depth bench may take, and the whole bench's wall clock (BOX_WALL_S). */
enum { DEPTH_BENCH_SEARCH_S = 600 };

/*
 * The bench of an engine without a bench command (ElephantEye: a UCCI
 * engine has no bench), as OpenBench benches an engine by searching fixed
 * positions: the binary started in the sandbox and spoken to as its record
 * says (protocol, dialect, the commands after the handshake), the bench
 * positions (engine/bench.c, xqf-engine bench's) each searched to the
 * record's depth in one process, the nodes it reports last for each search
 * summed into g->bench and divided by the wall clock for the speed.  The
 * same binary gives the same sum: a fixed depth from the same sequence of
 * positions.  Exit status: CLI_USAGE with the engine's words when a search
 * fails (no bestmove, an illegal move, no nodes reported).
 */
static int engine_depth_bench(CliGitRef *g, const BuildLog *log)
{
    const EngineRecord *e = g->engine;
    PlayerSpec *spec = calloc(1, sizeof *spec);
    if (!spec)
        return cli_fail(CLI_FAIL, "out of memory");
    enum { WORDS = 5 + ENGINE_INIT_MAX };
    char buf[WORDS][SPEC_TEXT_MAX + 16], *words[WORDS], err[256];
    int n = 0;
    snprintf(buf[n++], sizeof buf[0], "name=%s", e->name);
    if (strlen(g->binary) >= SPEC_TEXT_MAX) {
        free(spec);
        return cli_fail(CLI_USAGE, "engine %s: the binary's path '%s' is too long", e->name, g->binary);
    }
    snprintf(buf[n++], sizeof buf[0], "cmd=%.*s", SPEC_TEXT_MAX - 1, g->binary);
    snprintf(buf[n++], sizeof buf[0], "proto=%s", engine_protocol_name(e->protocol));
    snprintf(buf[n++], sizeof buf[0], "ranks=%d", e->ranks_from_one ? 1 : 0);
    snprintf(buf[n++], sizeof buf[0], "letters=%s", e->he_letters ? "he" : "nb");
    for (int i = 0; i < e->init_count && n < WORDS; i++)
        snprintf(buf[n++], sizeof buf[0], "init=%s", e->init[i]);
    for (int i = 0; i < n; i++)
        words[i] = buf[i];
    if (spec_parse(spec, n, words, 0, err, sizeof err) != 0) {
        free(spec);
        return cli_fail(CLI_USAGE, "engine %s: %s", e->name, err);
    }
    spec->sandbox = true;
    External *x = external_new(spec);
    free(spec);
    if (!x)
        return cli_fail(CLI_FAIL, "out of memory");
    int lfd = dup(log->fd);
    FILE *lf = lfd >= 0 ? fdopen(lfd, "a") : NULL;
    if (lfd >= 0 && !lf)
        close(lfd);
    Reply r;
    int status = external_new_game(x, NULL, &r) == 0
                     ? CLI_OK
                     : cli_fail(CLI_USAGE, "engine %s: %.12s (%s) does not start: %s", e->name, g->commit, g->ref,
                                r.detail);
    int64_t total = 0, t0 = clock_now_us();
    for (int i = 0; status == CLI_OK && i < bench_position_count(); i++) {
        const char *fen = bench_position(i);
        Board b;
        if (fen_parse(&b, fen, FEN_GAME, err, sizeof err) != 0) {
            status = cli_fail(CLI_FAIL, "bench position %d: %s", i + 1, err);
            break;
        }
        GameView v = { .fen = fen, .board = &b };
        ThinkLimits l = { .depth = e->bench_depth, .deadline_us = clock_now_us() + DEPTH_BENCH_SEARCH_S * INT64_C(1000000) };
        external_think(x, &v, &l, &r);
        if (lf)
            fprintf(lf, "position %d (%s): depth %d, %" PRId64 " nodes, %.3f s%s%s\n", i + 1, fen, e->bench_depth,
                    r.nodes, r.time_us / 1e6, r.fault != GAME_REASON_NONE ? ": " : "", r.detail);
        if (r.fault != GAME_REASON_NONE)
            status = cli_fail(CLI_USAGE, "engine %s: the bench of %.12s (%s) failed at position %d (%s): %s",
                              e->name, g->commit, g->ref, i + 1, fen, r.detail);
        else if (r.nodes <= 0)
            status = cli_fail(CLI_USAGE, "engine %s: the bench of %.12s (%s): no nodes reported at position %d "
                              "(an info line with nodes N)", e->name, g->commit, g->ref, i + 1);
        else
            total += r.nodes;
    }
    int64_t us = clock_now_us() - t0;
    external_destroy(&x);
    if (lf)
        fclose(lf);
    if (status != CLI_OK) {
        print_tail(log, g);
        return status;
    }
    g->bench = total;
    printf("Bench: %" PRId64 "\nSpeed: %" PRId64 " nodes/s\n", total, us > 0 ? total * 1000000 / us : 0);
    return CLI_OK;
}

int cli_git_build(Store *s, CliGitRef *g, const char *out, int64_t jobs)
{
    if (g->reuse) {
        StoreBuild b;
        int found = store_load_build(s, g->reuse, &b);
        if (found <= 0)
            return cli_fail(CLI_FAIL, "cannot read build %" PRId64, g->reuse);
        printf("Bench: %" PRId64 "\n", b.bench_nodes);
        GitOrigin origin = { .want_bench = g->want_bench, .src.commit = "" };
        snprintf(origin.src.commit, sizeof origin.src.commit, "%s", g->commit);
        fprintf(stderr, "xqf-tune: %.12s (%s): its tree was built already, build %" PRId64 " (%s)\n", g->commit,
                g->ref, b.id, b.build_id);
        return build_bench_check(b.bench_nodes, &origin);
    }
    char tmp[PATH_MAX], box[PATH_MAX], log_path[PATH_MAX], built[PATH_MAX], abs_out[PATH_MAX / 2], cwd[PATH_MAX / 4];
    if (!(out[0] == '/' ? build_path_fmt(abs_out, sizeof abs_out, "%s", out)
                        : getcwd(cwd, sizeof cwd) && build_path_fmt(abs_out, sizeof abs_out, "%s/%s", cwd, out)))
        return cli_fail(CLI_USAGE, "--out: '%s' is too long", out);
    out = abs_out;
    const char *tmpdir = getenv("TMPDIR");
    if (!build_path_fmt(tmp, sizeof tmp, "%s/xqf-git-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp") || !mkdtemp(tmp))
        return cli_fail(CLI_FAIL, "cannot make a temporary folder: %s", strerror(errno));
    /*
     * tmp (private to the builder) holds the log and box/, the only folder
     * the box may write: whatever the branch's build leaves there (a link
     * named like the log or the binary, a FIFO, a hard link) is never
     * followed or opened by path from outside; the log is written through
     * a descriptor held from here on, and the binary is taken out of box/
     * by build_copy_binary's checks.
     */
    char tag[20], why[PATH_MAX + 128];
    build_net_suffix(&g->net, tag);
    const char *name = g->engine ? g->engine->name : "xqf-engine";
    BuildLog log = { .fd = -1, .path = log_path };
    int status = build_path_fmt(box, sizeof box, "%s/box", tmp) && build_path_fmt(log_path, sizeof log_path, "%s/build.log", tmp) &&
                         build_path_fmt(built, sizeof built, "%s/build/bin/xqf-engine", box) &&
                         build_path_fmt(g->binary, sizeof g->binary, "%s/%s-%.12s%s", out, name, g->commit, tag)
                     ? CLI_OK
                     : cli_fail(CLI_USAGE, "--out: '%s' is too long", out);
    if (status == CLI_OK && (mkdir(box, 0700) != 0 || build_log_open(&log, log_path, true) != 0))
        status = cli_fail(CLI_FAIL, "cannot make the build folder in %s: %s", tmp, strerror(errno));
    if (status == CLI_OK && g->net.id)
        status = cli_net_write(s, &g->net);
    if (status == CLI_OK)
        status = g->engine ? engine_compile(g, tmp, box, &log, jobs, built, sizeof built)
                           : git_compile(g, tmp, box, &log, jobs);
    if (status == CLI_OK && files_make_dirs(out) != 0)
        status = cli_fail(CLI_FAIL, "cannot create '%s': %s", out, strerror(errno));
    if (status == CLI_OK && build_copy_binary(box, built, g->binary, why, sizeof why) != 0) {
        dprintf(log.fd, "the build's binary is refused: %s\n", why);
        print_tail(&log, g);
        status = cli_fail(CLI_USAGE, "commit %.12s (%s): the build's binary is refused: %s: nothing recorded",
                          g->commit, g->ref, why);
    }
    if (status == CLI_OK && g->engine)
        status = g->engine->bench_command[0] ? engine_bench(g, &log) : engine_depth_bench(g, &log);
    else if (status == CLI_OK && (status = build_bench(g->binary, &log, &g->bench, true)) != CLI_OK)
        print_tail(&log, g);
    GitOrigin origin = { .want_bench = g->want_bench };
    snprintf(origin.src.commit, sizeof origin.src.commit, "%s", g->commit);
    if (status == CLI_OK)
        status = build_bench_check(g->bench, &origin);
    /* the compiled-in net against its file, in the box too (the binary is the branch's) */
    if (status == CLI_OK && g->net.id)
        status = build_net_check(g->binary, &log, &g->net, g->bench, true);
    build_log_close(&log);
    cli_net_drop(&g->net);
    if (status != CLI_OK && g->binary[0])
        unlink(g->binary);
    remove_tree(tmp);
    return status;
}

int cli_git_register(Store *s, CliGitRef *g, const char *sign_key, int64_t *id)
{
    CliSigning sg = { 0 };
    char err[512];
    if (sign_key && sign_key_read(sign_key, true, &sg.key, err, sizeof err) != 0)
        return cli_fail(CLI_USAGE, "--sign-key: %s", err);
    sg.has_key = sign_key != NULL;
    int status;
    StoreBuild b = { 0 };
    if (g->reuse) {
        /* the build of the same tree: signed now if it was not and a key is given */
        status = store_load_build(s, g->reuse, &b) == 1 ? CLI_OK : cli_fail(CLI_FAIL, "cannot read build %" PRId64, g->reuse);
        if (status == CLI_OK && !b.signature[0] && sg.has_key && (status = build_signing_apply(&sg, &b)) == CLI_OK &&
            store_add_build(s, &b, id) != 0)
            status = cli_fail(CLI_FAIL, "cannot record the signature");
        if (status == CLI_OK)
            printf("SHA-256: %s\nBuild: %" PRId64 "\nBinary: %s\n", b.sha256, b.id, b.path);
        *id = b.id;
    } else {
        GitOrigin origin = { .want_bench = g->want_bench, .bench = g->bench, .engine = g->engine };
        snprintf(origin.src.commit, sizeof origin.src.commit, "%s", g->commit);
        snprintf(origin.src.tree, sizeof origin.src.tree, "%s", g->tree);
        snprintf(origin.src.subject, sizeof origin.src.subject, "%s", g->subject);
        char tag[20], log[PATH_MAX];
        build_net_suffix(&g->net, tag);
        snprintf(b.build_id, sizeof b.build_id, "%.32s-%.12s%s", g->engine ? g->engine->name : "xqf-engine",
                 g->commit, tag);
        status = build_path_fmt(log, sizeof log, "%s.bench.log", g->binary) ? CLI_OK : cli_fail(CLI_USAGE, "path too long");
        if (status == CLI_OK)
            status = build_register_binary(s, g->binary, log, &b, &sg, &origin, g->net.id ? &g->net : NULL, id);
    }
    sign_key_wipe(&sg.key);
    return status;
}

/* ---- what a test of two refs changes ---------------------------------------------- */

/*
 * A line of git's output as PostgreSQL's text takes it, appended at
 * out + *n (size in all): xqf_text_sanitize between its tabs (kept, as a
 * diff indents with them), so control bytes become spaces and bad UTF-8
 * '?'.  False when it does not fit whole (nothing appended then).
 */
static bool append_line(char *out, size_t size, size_t *n, const char *line, size_t len)
{
    size_t at = *n;
    for (size_t i = 0; i <= len;) {
        size_t seg = strcspn(line + i, "\t");
        if (i + seg > len)
            seg = len - i;
        char *piece = strndup(line + i, seg);
        /* a sanitized piece is at most its bytes: '?' or a space for each bad one */
        if (!piece || at + seg + 2 > size) {
            free(piece);
            out[*n] = '\0';
            return false;
        }
        at += xqf_text_sanitize(out + at, size - at, piece);
        free(piece);
        i += seg;
        if (i < len && line[i] == '\t') {
            out[at++] = '\t';
            i++;
        } else
            break;
    }
    out[at++] = '\n';
    out[at] = '\0';
    *n = at;
    return true;
}

int cli_git_changes(const char *repo, const char *test, const char *base, StoreRunChanges *c)
{
    enum { LOG_OUT_MAX = 1 << 18 };
    char range[2 * STORE_NAME_MAX + 4], count[32], max[32];
    memset(c, 0, sizeof *c);
    snprintf(range, sizeof range, "%s..%s", base, test);
    snprintf(max, sizeof max, "--max-count=%d", STORE_COMMITS_MAX);
    char *out = malloc(STORE_DIFF_MAX + 2), *raw = malloc(LOG_OUT_MAX);
    c->commits = calloc(STORE_COMMITS_MAX, sizeof *c->commits);
    c->diff = malloc(STORE_DIFF_MAX + 1);
    int status = out && raw && c->commits && c->diff ? CLI_OK : cli_fail(CLI_FAIL, "out of memory");
    /* the fields apart by the unit separator, which no name or subject holds (%s is one line) */
    if (status == CLI_OK &&
        (git(repo, NULL, count, sizeof count, (const char *[]){ "rev-list", "--count", range, "--", NULL }) != 0 ||
         git(repo, NULL, raw, LOG_OUT_MAX, (const char *[]){ "log", "--no-color", max, "--format=%H%x1f%an%x1f%aI%x1f%s",
                                                               range, "--", NULL }) != 0))
        status = cli_fail(CLI_FAIL, "git log %s failed in %s", range, repo);
    if (status == CLI_OK) {
        c->total = atoi(count);
        for (char *line = raw; *line && c->count < STORE_COMMITS_MAX;) {
            size_t len = strcspn(line, "\n");
            char *end = line + len, *f[4] = { line };
            bool more = *end != '\0';
            *end = '\0';
            for (int i = 1; i < 4 && f[i - 1]; i++)
                if ((f[i] = strchr(f[i - 1], '\x1f')))
                    *f[i]++ = '\0';
            size_t hex = strspn(f[0], "0123456789abcdef");
            if (f[3] && (hex == 40 || hex == 64) && !f[0][hex]) {
                StoreCommit *m = &c->commits[c->count++];
                snprintf(m->hash, sizeof m->hash, "%s", f[0]);
                xqf_text_sanitize(m->author, sizeof m->author, f[1]);
                xqf_text_sanitize(m->at, sizeof m->at, f[2]);
                xqf_text_sanitize(m->subject, sizeof m->subject, f[3]);
            }
            line = more ? end + 1 : end;
        }
    }
    /* the diff, never through a driver or filter the repository's attributes might name */
    if (status == CLI_OK &&
        git(repo, NULL, out, STORE_DIFF_MAX + 2, (const char *[]){ "diff", "--no-color", "--no-ext-diff",
                                                                   "--no-textconv", base, test, "--", NULL }) != 0)
        status = cli_fail(CLI_FAIL, "git diff %.12s %.12s failed in %s", base, test, repo);
    if (status == CLI_OK) {
        size_t len = strlen(out), n = 0;
        c->diff[0] = '\0';
        /* more than the cap read: the diff was longer (git()'s capture keeps its first bytes) */
        c->diff_cut = len > STORE_DIFF_MAX;
        for (const char *line = out; *line;) {
            size_t l = strcspn(line, "\n");
            if (!line[l] && c->diff_cut)
                break;   /* the last line read is a part of one */
            if (!append_line(c->diff, STORE_DIFF_MAX + 1, &n, line, l)) {
                c->diff_cut = true;
                break;
            }
            line += l + (line[l] != '\0');
        }
    }
    free(out);
    free(raw);
    if (status != CLI_OK)
        store_run_changes_free(c);
    return status;
}

int cli_record_changes(Store *s, int64_t run, const char *repo, const char *test_ref, const char *test,
                       const char *tree, const char *subject, const char *base_ref, const char *base)
{
    StoreRunChanges c;
    int status = cli_git_changes(repo, test, base, &c);
    if (status != CLI_OK) {
        fprintf(stderr, "xqf-tune: run %" PRId64 ": its commits and diff are not recorded\n", run);
        return status;
    }
    snprintf(c.test_ref, sizeof c.test_ref, "%s", test_ref);
    snprintf(c.base_ref, sizeof c.base_ref, "%s", base_ref);
    snprintf(c.test_commit, sizeof c.test_commit, "%s", test);
    snprintf(c.base_commit, sizeof c.base_commit, "%s", base);
    snprintf(c.test_tree, sizeof c.test_tree, "%s", tree);
    char name[RUN_NAME_MADE_MAX + 1];
    run_refs_name(test_ref, base_ref, subject, name, sizeof name);
    int rc = store_run_changes_set(s, run, &c, name);
    if (rc != 1)
        status = cli_fail(CLI_FAIL, "run %" PRId64 ": its commits and diff cannot be recorded", run);
    else
        printf("run %" PRId64 ": %d commit%s from %.12s to %.12s, a diff of %zu bytes%s\n", run, c.total,
               c.total == 1 ? "" : "s", base, test, strlen(c.diff), c.diff_cut ? " (cut)" : "");
    store_run_changes_free(&c);
    return status;
}

int cli_show_changes(Store *s, int64_t run, bool diff)
{
    StoreRunChanges c;
    int found = store_run_changes(s, run, &c);
    if (found < 0)
        return cli_fail(CLI_FAIL, "cannot read the commits of run %" PRId64, run);
    if (found == 0)
        return CLI_OK;
    printf("Refs: %s (%.12s) vs %s (%.12s)\n", cli_shown(c.test_ref), c.test_commit, cli_shown(c.base_ref),
           c.base_commit);
    printf("Commits: %d%s\n", c.total, c.total > c.count ? " (the newest shown)" : "");
    for (int i = 0; i < c.count; i++) {
        const StoreCommit *m = &c.commits[i];
        printf("  %.12s %.10s ", m->hash, m->at);
        printf("%s ", cli_shown(m->author));
        printf("%s\n", cli_shown(m->subject));
    }
    if (diff) {
        /* a control byte (but the lines' tabs) as '?': the branch's text moves no cursor of the reader's terminal */
        for (const unsigned char *p = (const unsigned char *)c.diff; *p; p++)
            putchar((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f ? '?' : *p);
        if (c.diff_cut)
            printf("(the diff is cut here: longer than %d KiB)\n", STORE_DIFF_MAX >> 10);
    } else if (c.diff[0])
        printf("Diff: %zu bytes%s (xqf-tune show %" PRId64 " --diff)\n", strlen(c.diff), c.diff_cut ? ", cut" : "",
               run);
    store_run_changes_free(&c);
    return CLI_OK;
}

/* A test of git refs made on the web: its build requests and their commits, with why one failed. Exit status. */
static int show_requests(Store *s, int64_t run)
{
    StoreBuildRequest *q = NULL;
    int n = store_build_requests(s, run, &q);
    if (n < 0)
        return cli_fail(CLI_FAIL, "cannot read the build requests of run %" PRId64, run);
    for (int i = 0; i < n; i++) {
        printf("%s ref: %s, %s", strcmp(q[i].side, "test") == 0 ? "Test" : "Base", q[i].ref, q[i].state);
        /* the commit an approval binds (pinned when the test was made), with its subject */
        if (q[i].commit[0])
            printf(", commit %s %s", q[i].commit, cli_shown(q[i].subject));
        else
            printf(", commit not read yet (the builder reads it)");
        if (q[i].build_id)
            printf(" (build %" PRId64 ")", q[i].build_id);
        printf("\n");
        /* the reason holds a build log's tail, a branch's words: escaped line by line (rows older than the
           builder's own sanitizing may hold anything) */
        char line[sizeof q[i].error];
        for (const char *p = q[i].error; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != 0)) {
            snprintf(line, sizeof line, "%.*s", (int)strcspn(p, "\n"), p);
            printf("    %s\n", cli_shown(line));
        }
    }
    free(q);
    return CLI_OK;
}

int cli_show_builds(Store *s, int64_t run)
{
    int64_t ids[2];
    if (show_requests(s, run) != CLI_OK)
        return CLI_FAIL;
    if (store_run_builds(s, run, &ids[0], &ids[1]) < 0)
        return cli_fail(CLI_FAIL, "cannot read the builds of run %" PRId64, run);
    for (int i = 0; i < 2; i++) {
        StoreBuild b;
        StoreBuildSource src;
        if (!ids[i])
            continue;
        if (store_load_build(s, ids[i], &b) != 1 || store_build_source(s, ids[i], &src) != 1)
            return cli_fail(CLI_FAIL, "cannot read build %" PRId64, ids[i]);
        printf("%s build: %" PRId64 " %s, bench %" PRId64 ", %s", i ? "Base" : "Test", b.id, b.build_id,
               b.bench_nodes, b.signature[0] ? "signed" : "unsigned");
        if (src.commit[0])
            printf(", commit %.12s %s", src.commit, cli_shown(src.subject));
        if (b.net_id)
            printf(", net %s (SHA-256 %.16s) compiled in", cli_shown(b.net_name), b.net_sha256);
        printf("\n");
    }
    int64_t ref_nps;
    StoreWorkerBench *wb = NULL;
    int n = store_run_ref_nps(s, run, &ref_nps) < 0 ? -1 : store_worker_benches(s, run, &wb);
    if (n < 0)
        return cli_fail(CLI_FAIL, "cannot read the workers' benches of run %" PRId64, run);
    if (ref_nps > 0)
        printf("Clock scaled (--tc-scale): reference %" PRId64 " nodes/s\n", ref_nps);
    if (n > 0)
        printf("Workers' benches of its engines:\n");
    for (int i = 0; i < n; i++) {
        char line[STORE_TEXT_MAX * 2], shown[STORE_TEXT_MAX * 4];
        snprintf(line, sizeof line, "  %s %s%.16s: bench %" PRId64 ", %" PRId64 " nodes/s%s%s", wb[i].worker_name,
                 wb[i].net ? "net " : wb[i].sha256[0] ? "build " : "built-in engine", wb[i].sha256, wb[i].bench_nodes, wb[i].nps,
                 wb[i].refused[0] ? ", REFUSED: " : "", wb[i].refused);
        xqf_escape(shown, sizeof shown, line);  /* from the network */
        printf("%s\n", shown);
    }
    free(wb);
    return CLI_OK;
}

/* xqf-tune build --ref REF: one commit built and registered (of --engine NAME's repository, by its record). */
int build_ref(const Opts *o, const char *out, int64_t jobs)
{
    if (o->npositional != 0 || opts_given(o, "--binary") || opts_given(o, "--name") ||
        opts_given(o, "--signature") || opts_given(o, "--source"))
        return cli_fail(CLI_USAGE, "build --ref REF takes only --engine, --net, --repo, --out, --jobs, --sign-key "
                                   "and --db");
    const char *name = opts_text(o, "--engine");
    bool other = name && strcmp(name, "xqf") != 0;
    if (other && opts_given(o, "--repo"))
        return cli_fail(CLI_USAGE, "--repo: engine %s's refs are read from its record's repository", name);
    Store *s = NULL;
    CliGitRef g;
    EngineRecord *engine = other ? malloc(sizeof *engine) : NULL;
    char cache[PATH_MAX];
    int64_t id;
    int status = other && !engine ? cli_fail(CLI_FAIL, "out of memory") : cli_open_db(o, &s);
    if (status == CLI_OK && !build_path_fmt(cache, sizeof cache, "%s/repos", out))
        status = cli_fail(CLI_USAGE, "--out: '%s' is too long", out);
    if (status == CLI_OK && other)
        status = cli_engine_load(s, "--engine", name, engine);
    if (status == CLI_OK && (status = cli_git_resolve(s, opts_text(o, "--repo"), opts_text(o, "--ref"),
                                                      opts_text(o, "--net"), engine, cache, &g)) == CLI_OK &&
        (status = cli_git_build(s, &g, out, jobs)) == CLI_OK)
        status = cli_git_register(s, &g, opts_text(o, "--sign-key"), &id);
    store_destroy(&s);
    free(engine);
    return status;
}
