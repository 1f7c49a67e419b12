/*
 * build.c - xqf-tune build: a tuned xqf-engine compiled with a run's
 * export as its defaults, or any engine binary, benched, hashed and
 * recorded (with its bytes, which workers fetch) in the engine builds
 * table.  This file holds the command (its options, which form runs) and
 * a run's build; a git commit's build is build_git.c's, the builder of
 * the web's tests build_serve.c's, the signer build_sign.c's, the steps
 * they share build_steps.c's (build_internal.h).
 */
#define _DEFAULT_SOURCE /* realpath */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_internal.h"
#include "files.h"
#include "sha256.h"

static const OptSpec BUILD_OPTIONS[] = {
    { "--out", OPT_TEXT, "DIR", "build-tuned", .help = "where the parameter file, build and binary go" },
    { "--source", OPT_TEXT, "DIR", XQF_SOURCE_DIR, .help = "the source tree" },
    { "--jobs", OPT_INT, "N", NULL, .imin = 1, .imax = 1024, .help = "parallel compile jobs (default: online cores)" },
    { "--binary", OPT_TEXT, "FILE", NULL, .help = "register this engine binary instead" },
    { "--name", OPT_TEXT, "NAME", NULL, .help = "with --binary: its name (default xqf-engine-SHA12)" },
    { "--sign-key", OPT_TEXT, "FILE", NULL, .help = "sign the build with this operator key (xqf-keys sign-new)" },
    { "--signature", OPT_TEXT, "HEX", NULL, .help = "with --binary: its signature made elsewhere (xqf-keys sign)" },
    { "--ref", OPT_TEXT, "REF", NULL, .help = "build this git commit (branch, tag, hash) instead" },
    { "--engine", OPT_TEXT, "NAME", NULL, .help = "with --ref: a commit of this engine's repository, built by its record" },
    { "--net", OPT_TEXT, "NET", NULL, .help = "with RUN or --ref: compile this registered net in as the default evaluation" },
    { "--repo", OPT_TEXT, "DIR", ".", .help = "with --ref or --serve: the git repository of the project" },
    { "--serve", OPT_FLAG, NULL, NULL, .help = "build the git refs of the approved tests created on the web" },
    { "--sign-serve", OPT_FLAG, NULL, NULL, .help = "sign what the builder built for approved tests, then start them" },
    { "--watch", OPT_INT, "SECONDS", NULL, .imin = 1, .imax = 86400, .help = "with --serve or --sign-serve: keep serving, looking every SECONDS" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable BUILD_TABLE = {
    .program = "xqf-tune", .spec = BUILD_OPTIONS, .max_positional = 1,
    .usage =
        "Usage: xqf-tune build RUN [--net NET] [--out DIR] [--source DIR] [--jobs N] [--sign-key FILE]\n"
        "                      [--db CONNINFO]\n"
        "       xqf-tune build --binary FILE [--name NAME] [--sign-key FILE | --signature HEX] [--db CONNINFO]\n"
        "       xqf-tune build --ref REF [--net NET] [--repo DIR] [--out DIR] [--jobs N] [--sign-key FILE]\n"
        "                      [--db CONNINFO]\n"
        "       xqf-tune build --ref REF --engine NAME [--out DIR] [--sign-key FILE] [--db CONNINFO]\n"
        "       xqf-tune build --serve [--repo DIR] [--watch SECONDS] [--out DIR] [--jobs N] [--db CONNINFO]\n"
        "       xqf-tune build --sign-serve --sign-key FILE [--watch SECONDS] [--db CONNINFO]\n"
        "A tuned engine: xqf-engine compiled with the run's exported parameters as its\n"
        "defaults (cmake -DXQF_PARAMS_FILE), named with the run id and the parameter\n"
        "set's hash (HASH, 16 hex digits).  In DIR:\n"
        "    run-RUN-HASH.params      the exported parameter file\n"
        "    run-RUN-HASH/            the build directory (its log: build.log)\n"
        "    xqf-engine-runRUN-HASH   the binary\n"
        "Runs the binary's bench, asks it for the parameters it knows (`uci`: its\n"
        "spin options with their bounds, up to uciok within 10 s), records the build\n"
        "(run, parameter hash, SHA-256, bench signature, parameters, path) in the\n"
        "engine builds table and prints:\n"
        "    Parameters: FILE (set HASH)\n"
        "    Bench: N\n"
        "    SHA-256: HEX\n"
        "    Spin options: N\n"
        "    Signature: HEX (or none)\n"
        "    Build: ID\n"
        "    Binary: PATH\n"
        "The second form registers any xqf-engine binary (a search change built\n"
        "elsewhere), named NAME, the same way.  Either way the binary itself is\n"
        "stored in the database: workers fetch it by its SHA-256 (checked, cached)\n"
        "to play it, e.g. in `xqf-tune sprt new --test-build ID`; the sets it plays\n"
        "there are checked against the parameters it listed.  A binary whose bench\n"
        "fails or that does not list its options ends with status 1, not recorded.\n"
        "Workers run only builds signed by an operator key they trust (--trust):\n"
        "--sign-key signs the build's SHA-256 and name with the operator's secret key\n"
        "(xqf-keys sign-new FILE); --signature takes a signature made on another machine\n"
        "by `xqf-keys sign KEYFILE BINARY NAME`.  An unsigned build is recorded with a\n"
        "warning: only workers started with --allow-unsigned play it.\n"
        "The third form builds a git commit of the project: REF (a branch, tag or\n"
        "hash) of the repository DIR is resolved to its commit, exported (git\n"
        "archive) into a clean temporary folder, built there (Release, the\n"
        "project's own CMake, the xqf-engine target) and benched; when the\n"
        "commit's message says `Bench: N`, the bench signature must be N.  The\n"
        "binary goes to the --out folder as xqf-engine-COMMIT12; the build is\n"
        "recorded with its commit, tree and subject.  A commit whose tree was\n"
        "built before reuses that build (checked against its Bench: line).\n"
        "A build that fails prints its log's tail.  An unknown ref, a folder that\n"
        "is not a git repository of this project, a build that fails and a bench\n"
        "that is not the commit's Bench: end with status 2, recording nothing.\n"
        "Prints Commit: HASH SUBJECT and Tree: HASH, then the lines above.\n"
        "With --engine NAME the commit is of another engine (xqf-tune engine add):\n"
        "read from its record's repository (a URL mirrored into DIR/repos), built\n"
        "by its record's build command or CMake target and benched by its bench\n"
        "command and regexes, in the sandbox, as NAME-COMMIT12.\n"
        "A branch's code runs when it is built (CMake runs what its tree says), so\n"
        "the configure, the compile and the binary's bench and uci run in a sandbox\n"
        "(bubblewrap): as nobody, with no network, an empty environment, a private\n"
        "/tmp, the system's /usr read-only and nothing else of the machine but the\n"
        "build folder, under memory, CPU-time and 30-minute limits.  Without\n"
        "bubblewrap (or user namespaces) a ref is not built.\n"
        "The fourth form is the builder of the tests of git refs created on the web\n"
        "(xqf-web never compiles: such a test waits with a build request per ref;\n"
        "a tester's waits for an admin's approval first, in state pending, and is\n"
        "built only once approved, in state building): it first reads the commit\n"
        "each new request's ref names and pins it (building nothing: the approval\n"
        "is of these commits), then takes the requests of approved tests one by\n"
        "one, oldest first, refuses a ref that no longer names its pinned commit\n"
        "(the test fails, both commits named), builds the pinned commit of DIR as\n"
        "the third form does and records the outcome, unsigned: the builder holds no\n"
        "key (--sign-key is refused).  When both sides are built and signed, the\n"
        "test starts.  The fifth form is the signer, a process of its own with the\n"
        "operator's key that never runs what it signs: it reads each unsigned\n"
        "build of an approved test from the database, checks its bytes against\n"
        "their SHA-256, signs them and starts the tests that waited for it.  A\n"
        "ref that does not resolve or build, whose bench is not its Bench: line, or\n"
        "whose build does not take the set its side plays (checked against the\n"
        "parameters the build lists, as sprt new checks it; the form could check\n"
        "only its syntax) ends the test in state failed, the reason (and the build\n"
        "log's tail) on its web page and in xqf-tune show.  Without --watch the\n"
        "builder and the signer serve what waits and exit; with it, they keep\n"
        "looking every SECONDS (a request taken by a builder that died is taken\n"
        "again after an hour).\n"
        "--net NET (with RUN or --ref) compiles a registered net (xqf-tune net add: an\n"
        "ID, SHA-256 or name) into the engine as its default evaluation (cmake\n"
        "-DXQF_DEFAULT_NET): its stored bytes are written to a folder of their own,\n"
        "checked against their SHA-256 and by the engine's reader, and bound\n"
        "read-only into the sandbox of a --ref build.  The build is named\n"
        "...-netSHA12, recorded with the net (show and the web name it; a tree built\n"
        "with one net is not reused for another), and checked: its uci must say\n"
        "UseNNUE default true and its bench with the compiled-in net must be its\n"
        "bench with EvalFile=NET, else it is not recorded (status 1).  Prints\n"
        "    Net: NAME (SHA-256 HEX)\n"
        "    Net check: bench N with the compiled-in net and with EvalFile=NAME\n",
};

/* xqf-tune build --binary FILE: registers a binary built elsewhere. Exit status. */
static int build_binary(const Opts *o, CliSigning *sg)
{
    const char *binary = opts_text(o, "--binary"), *name = opts_text(o, "--name");
    char abs[PATH_MAX], log[PATH_MAX], sha[SHA256_HEX_LEN + 1];
    if (o->npositional != 0 || opts_given(o, "--out") || opts_given(o, "--source") || opts_given(o, "--jobs"))
        return cli_fail(CLI_USAGE, "build --binary FILE takes only --name, --sign-key, --signature and --db");
    if (access(binary, X_OK) != 0)
        return cli_fail(CLI_USAGE, "--binary: '%s' is not an executable file: %s", binary, strerror(errno));
    if (name && !sign_name_ok(name))
        return cli_fail(CLI_USAGE, "--name: 1 to %d printable characters without spaces, please", SIGN_NAME_MAX);
    if (!realpath(binary, abs))
        return cli_fail(CLI_USAGE, "--binary: '%s': %s", binary, strerror(errno));
    if (!build_path_fmt(log, sizeof log, "%s.bench.log", abs))
        return cli_fail(CLI_USAGE, "--binary: '%s': path too long", binary);
    if (sha256_file(abs, sha) != 0)
        return cli_fail(CLI_FAIL, "cannot hash %s", abs);
    StoreBuild b = { 0 };
    if (name)
        snprintf(b.build_id, sizeof b.build_id, "%s", name);
    else
        snprintf(b.build_id, sizeof b.build_id, "xqf-engine-%.12s", sha);
    Store *s = NULL;
    int status = cli_open_db(o, &s);
    if (status == CLI_OK)
        status = build_register_binary(s, abs, log, &b, sg, NULL, NULL, NULL);
    store_destroy(&s);
    return status;
}

/* Where a run's build goes, all under out (absolute). */
typedef struct {
    char hash[17], params_file[PATH_MAX], dir[PATH_MAX], log[PATH_MAX], built[PATH_MAX], binary[PATH_MAX];
} BuildPaths;

/* The paths of run id's build of the set p (with net, when not NULL) in out. Exit status. */
static int build_paths(const char *out, int64_t id, const Params *p, const CliNetFile *net, BuildPaths *bp)
{
    char tag[20];
    build_net_suffix(net, tag);
    snprintf(bp->hash, sizeof bp->hash, "%016" PRIx64, params_hash(p));
    bool ok = build_path_fmt(bp->params_file, sizeof bp->params_file, "%s/run-%" PRId64 "-%s.params", out, id, bp->hash) &&
              build_path_fmt(bp->dir, sizeof bp->dir, "%s/run-%" PRId64 "-%s%s", out, id, bp->hash, tag) &&
              build_path_fmt(bp->log, sizeof bp->log, "%s/build.log", bp->dir) &&
              build_path_fmt(bp->built, sizeof bp->built, "%s/bin/xqf-engine", bp->dir) &&
              build_path_fmt(bp->binary, sizeof bp->binary, "%s/xqf-engine-run%" PRId64 "-%s%s", out, id, bp->hash, tag) &&
              strlen(bp->binary) <= STORE_TEXT_MAX;
    return ok ? CLI_OK : cli_fail(CLI_USAGE, "--out: '%s' is too long", out);
}

/*
 * Configures and compiles xqf-engine with params_file as its defaults (and
 * net's file as its default net, or none), copies the binary out. Exit status.
 */
static int compile(const char *source, const BuildPaths *bp, const CliNetFile *net, int64_t jobs, int64_t id)
{
    char def_params[PATH_MAX + 32], def_net[CLI_PATH_MAX + 32], src_dir[PATH_MAX], dir[PATH_MAX], jobs_text[24];
    snprintf(def_params, sizeof def_params, "-DXQF_PARAMS_FILE=%s", bp->params_file);
    /* without a net, the tree's own default (auto: engine/nets/default.nnue when it has one), as before */
    snprintf(def_net, sizeof def_net, "-DXQF_DEFAULT_NET=%s", net && net->id ? net->path : "auto");
    snprintf(src_dir, sizeof src_dir, "%s", source);
    snprintf(dir, sizeof dir, "%s", bp->dir);
    snprintf(jobs_text, sizeof jobs_text, "%" PRId64, jobs);
    char *configure[] = { "cmake", "-S", src_dir, "-B", dir, "-DCMAKE_BUILD_TYPE=Release", def_params, def_net,
                          "-DXQF_TESTS=OFF", NULL };
    char *build[] = { "cmake", "--build", dir, "--target", "xqf-engine", "-j", jobs_text, NULL };
    fprintf(stderr, "xqf-tune: building xqf-engine for run %" PRId64 " in %s\n", id, dir);
    BuildLog log;
    char why[PATH_MAX + 128];
    if (build_log_open(&log, bp->log, false) != 0)
        return cli_fail(CLI_FAIL, "cannot open the log %s: %s", bp->log, strerror(errno));
    int rc = build_spawn(configure, &log, NULL, 0, NULL) != 0 || build_spawn(build, &log, NULL, 0, NULL) != 0;
    build_log_close(&log);
    if (rc != 0)
        return cli_fail(CLI_FAIL, "the build failed (see %s)", bp->log);
    /* our own tree, built outside any box: its binary is still taken as a box's is (one way for every build) */
    if (build_copy_binary(bp->dir, bp->built, bp->binary, why, sizeof why) != 0)
        return cli_fail(CLI_FAIL, "%s", why);
    return CLI_OK;
}

/* The build of run id (with the registered net net_key compiled in, or NULL): export, compile, register. Exit status. */
static int build_run(Store *s, int64_t id, const char *source, const char *out, int64_t jobs, CliSigning *sg,
                     const char *net_key, int64_t *build)
{
    StoreRun r;
    Params p;
    BuildPaths bp;
    CliNetFile net = { 0 };
    int status;
    if ((status = cli_load_run(s, id, &r)) != CLI_OK ||
        (net_key && (status = cli_net_lookup(s, "--net", net_key, &net)) != CLI_OK) ||
        (status = cli_export_set(s, &r, &p)) != CLI_OK || (status = build_paths(out, id, &p, &net, &bp)) != CLI_OK ||
        (status = cli_write_export(&r, &p, bp.params_file)) != CLI_OK)
        return status;
    if (files_make_dirs(bp.dir) != 0)
        return cli_fail(CLI_FAIL, "cannot create '%s': %s", bp.dir, strerror(errno));
    printf("Parameters: %s (set %s)\n", bp.params_file, bp.hash);
    if (net.id && (status = cli_net_write(s, &net)) != CLI_OK)
        return status;
    if (net.id)
        printf("Net: %s (SHA-256 %s)\n", cli_shown(net.name), net.sha256);
    fflush(stdout);
    if ((status = compile(source, &bp, &net, jobs, id)) == CLI_OK) {
        StoreBuild b = { .run_id = id };
        char tag[20];
        build_net_suffix(&net, tag);
        snprintf(b.params_hash, sizeof b.params_hash, "%s", bp.hash);
        snprintf(b.build_id, sizeof b.build_id, "xqf-engine-run%" PRId64 "-%s%s", id, bp.hash, tag);
        status = build_register_binary(s, bp.binary, bp.log, &b, sg, NULL, net.id ? &net : NULL, build);
    }
    cli_net_drop(&net);
    return status;
}

int cli_build_run(Store *s, int64_t run, const char *source, const char *out, const char *sign_key, const char *net,
                  int64_t *build)
{
    CliSigning sg = { .has_key = false };
    char err[512], path[PATH_MAX];
    *build = 0;
    if (!build_path_fmt(path, sizeof path, "%s/engine/params.def", source) || access(path, R_OK) != 0)
        return cli_fail(CLI_USAGE, "--source: '%s' is not the project's source tree (no engine/params.def)", source);
    if (files_make_dirs(out) != 0)
        return cli_fail(CLI_FAIL, "--out: cannot create '%s': %s", out, strerror(errno));
    if (sign_key && sign_key_read(sign_key, true, &sg.key, err, sizeof err) != 0)
        return cli_fail(CLI_USAGE, "--sign-key: %s", err);
    sg.has_key = sign_key != NULL;
    int status = build_run(s, run, source, out, build_online_cores(), &sg, net, build);
    sign_key_wipe(&sg.key);
    return status;
}

int tune_cmd_build(int argc, char **argv)
{
    Opts o;
    int64_t id;
    int status = cli_parse(&o, &BUILD_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    if (opts_given(&o, "--engine") && (!opts_given(&o, "--ref") || opts_given(&o, "--serve") ||
                                       opts_given(&o, "--sign-serve")))
        return cli_fail(CLI_USAGE, "--engine goes with --ref (the builder reads each run's engine)");
    CliSigning sg;
    if ((status = cli_signing_load(&o, &sg)) != CLI_OK)
        return status;
    if (opts_given(&o, "--sign-serve")) {
        status = build_sign_serve(&o, &sg);
        sign_key_wipe(&sg.key);
        return status;
    }
    if (opts_given(&o, "--serve")) {
        sign_key_wipe(&sg.key);
        return build_serve(&o, opts_given(&o, "--jobs") ? opts_int(&o, "--jobs") : build_online_cores());
    }
    if (opts_given(&o, "--watch"))
        return cli_fail(CLI_USAGE, "--watch goes with --serve or --sign-serve");
    if (opts_given(&o, "--binary")) {
        status = build_binary(&o, &sg);
        sign_key_wipe(&sg.key);
        return status;
    }
    int64_t jobs = opts_given(&o, "--jobs") ? opts_int(&o, "--jobs") : build_online_cores();
    if (opts_given(&o, "--ref")) {
        sign_key_wipe(&sg.key);
        return build_ref(&o, opts_text(&o, "--out"), jobs);
    }
    if (opts_given(&o, "--repo"))
        return cli_fail(CLI_USAGE, "--repo goes with --ref or --serve");
    if (opts_given(&o, "--name"))
        return cli_fail(CLI_USAGE, "--name goes with --binary (a run's build is named after the run)");
    if (opts_given(&o, "--signature"))
        return cli_fail(CLI_USAGE, "--signature goes with --binary (sign a run's build with --sign-key)");
    if ((status = cli_run_id(&o, &id)) != CLI_OK)
        return status;
    const char *source = opts_text(&o, "--source"), *out_opt = opts_text(&o, "--out");
    char path[PATH_MAX], out[PATH_MAX / 2], cwd[PATH_MAX / 4];
    if (!build_path_fmt(path, sizeof path, "%s/engine/params.def", source) || access(path, R_OK) != 0)
        return cli_fail(CLI_USAGE, "--source: '%s' is not the project's source tree (no engine/params.def)", source);
    if (files_make_dirs(out_opt) != 0)
        return cli_fail(CLI_FAIL, "--out: cannot create '%s': %s", out_opt, strerror(errno));
    if (!(out_opt[0] == '/' ? build_path_fmt(out, sizeof out, "%s", out_opt)
                            : getcwd(cwd, sizeof cwd) && build_path_fmt(out, sizeof out, "%s/%s", cwd, out_opt)))
        return cli_fail(CLI_USAGE, "--out: '%s' is too long", out_opt);
    Store *s = NULL;
    if ((status = cli_open_db(&o, &s)) == CLI_OK)
        status = build_run(s, id, source, out, jobs, &sg, opts_text(&o, "--net"), &id);
    store_destroy(&s);
    sign_key_wipe(&sg.key);
    return status;
}
