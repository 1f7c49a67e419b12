/*
 * user.c - xqf-tune user add: an account of the web dashboard (xqf-web)
 * with its role and a password hashed by libsodium's crypto_pwhash
 * (Argon2id), read from a file or the first line of stdin (never from
 * the command line, where other users see it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "password.h"
#include "store_users.h"

static const OptSpec USER_OPTIONS[] = {
    { "--role", OPT_TEXT, "ROLE", NULL, .help = "viewer (reads), tester (creates runs, stops its own) or admin, required" },
    { "--password-file", OPT_TEXT, "FILE", NULL, .help = "the password is the file's first line (default: stdin's)" },
    { "--replace", OPT_FLAG, NULL, NULL, .help = "change the role and password of an existing account" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable USER_TABLE = {
    .program = "xqf-tune", .spec = USER_OPTIONS, .max_positional = 2,
    .usage = "Usage: xqf-tune user add NAME --role viewer|tester|admin [--password-file FILE] [--replace]\n"
             "                         [--db CONNINFO]\n"
             "       xqf-tune user disable|enable|delete NAME [--db CONNINFO]\n"
             "\n"
             "Creates an account of the web dashboard (xqf-web).  The password (at least 8\n"
             "characters) is the first line of --password-file or of stdin; only its\n"
             "Argon2id hash is stored.  --replace changes an account's role and password\n"
             "and ends its sessions.  disable keeps an account from signing in and ends\n"
             "its sessions (enable undoes it); delete removes it and its sessions.\n",
};

/* The first line of path (NULL: stdin) into out. Exit status. */
static int read_password(const char *path, char *out, size_t size)
{
    FILE *f = path ? fopen(path, "r") : stdin;
    if (!f)
        return cli_fail(CLI_USAGE, "--password-file: cannot open '%s'", path);
    bool got = fgets(out, (int)size, f) != NULL;
    if (path)
        fclose(f);
    if (!got)
        return cli_fail(CLI_USAGE, "no password given (the first line of %s)", path ? path : "stdin");
    out[strcspn(out, "\r\n")] = '\0';
    const char *problem = xqf_password_problem(out);
    return problem ? cli_fail(CLI_USAGE, "user add: %s", problem) : CLI_OK;
}

/* xqf-tune user disable|enable|delete NAME. Exit status. */
static int user_state(const Opts *o, const char *verb, const char *name)
{
    bool disable = strcmp(verb, "disable") == 0, enable = strcmp(verb, "enable") == 0,
         delete = strcmp(verb, "delete") == 0;
    if (!disable && !enable && !delete)
        return cli_fail(CLI_USAGE, "user: unknown subcommand '%s' (add, disable, enable, delete)", verb);
    if (opts_given(o, "--role") || opts_given(o, "--password-file") || opts_given(o, "--replace"))
        return cli_fail(CLI_USAGE, "user %s takes only NAME and --db", verb);
    Store *s = NULL;
    int status = cli_open_db(o, &s);
    if (status != CLI_OK)
        return status;
    int rc = delete ? store_web_user_delete(s, name) : store_web_user_set_disabled(s, name, disable);
    store_destroy(&s);
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot write the account");
    if (rc == 0)
        return cli_fail(CLI_USAGE, "user %s: no account '%s'", verb, name);
    printf("%s %s\n", name, delete ? "deleted" : disable ? "disabled" : "enabled");
    return CLI_OK;
}

int tune_cmd_user(int argc, char **argv)
{
    Opts o;
    int status = cli_parse(&o, &USER_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    if (o.npositional == 2 && strcmp(o.positional[0], "add") != 0)
        return user_state(&o, o.positional[0], o.positional[1]);
    if (o.npositional != 2)
        return cli_fail(CLI_USAGE, "user: add, disable, enable or delete NAME (see xqf-tune user --help)");
    const char *name = o.positional[1], *role = opts_text(&o, "--role");
    const char *problem = xqf_user_name_problem(name);
    if (problem)
        return cli_fail(CLI_USAGE, "user add: %s", problem);
    if (!role || xqf_role_problem(role))
        return cli_fail(CLI_USAGE, "user add: --role viewer, tester or admin is required");
    char password[XQF_PASSWORD_MAX + 2], hash[XQF_PWHASH_MAX];
    if ((status = read_password(opts_text(&o, "--password-file"), password, sizeof password)) != CLI_OK)
        return status;
    int hashed = xqf_password_hash(password, hash);
    memset(password, 0, sizeof password);
    if (hashed != 0)
        return cli_fail(CLI_FAIL, "cannot hash the password (out of memory?)");
    Store *s = NULL;
    if ((status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    char actor[STORE_NAME_MAX + 1];
    cli_actor(actor, sizeof actor);
    int rc = store_web_user_add(s, name, role, hash, opts_given(&o, "--replace"), actor);
    store_destroy(&s);
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot write the account");
    if (rc == 0)
        return cli_fail(CLI_USAGE, "user add: '%s' exists (give --replace to change it)", name);
    printf("%s (%s)\n", name, role);
    return CLI_OK;
}
