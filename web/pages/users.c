/*
 * users.c - accounts: the login form and an admin's form for a new
 * account.
 */
#include "frame.h"

#include <string.h>

int page_users(const Form *values, const FieldError *errors, int nerrors, const char *notice, const Session *u,
               Buf *b)
{
    head(b, "Users", u);
    buf_puts(b, "<h1>New account</h1>\n");
    notice_line(b, notice);
    form_start(b, u, "/users", nerrors, "The account was not created");
    FormOut fo = { .b = b, .values = nerrors ? values : NULL, .errors = errors, .nerrors = nerrors };
    field(&fo, "name", "Name", "", "1-64 letters, digits, '_', '.' or '-'");
    field(&fo, "role", "Role", "viewer", "viewer, tester or admin");
    const char *msg = NULL;
    for (int i = 0; i < nerrors && !msg; i++)
        if (strcmp(errors[i].field, "password") == 0)
            msg = errors[i].message;
    buf_printf(b, "<div class=\"field%s\"><label for=\"f-password\">Password</label><input id=\"f-password\" "
                  "type=\"password\" name=\"password\" autocomplete=\"new-password\"><small>at least 8 characters"
                  "</small>", msg ? " invalid" : "");
    if (msg) {
        buf_puts(b, "<p class=\"field-error\" id=\"err-password\">");
        buf_html(b, msg);
        buf_puts(b, "</p>");
    }
    buf_puts(b, "</div>\n<button>Create</button></form>\n");
    foot(b);
    return nerrors ? 400 : 200;
}

int page_login(const char *message, const char *token, const Session *u, Buf *b)
{
    head(b, "Log in", u);
    buf_puts(b, "<h1>Log in</h1>\n");
    if (message) {
        buf_puts(b, "<p class=\"error\">");
        buf_html(b, message);
        buf_puts(b, "</p>\n");
    }
    buf_puts(b, "<form method=\"post\" action=\"/login\" class=\"new\"><input type=\"hidden\" name=\"login_csrf\" "
                "value=\"");
    buf_html(b, token);
    buf_puts(b, "\"><div class=\"field\"><label for=\"f-user\">"
                "User</label><input id=\"f-user\" name=\"user\" autocomplete=\"username\"></div><div class=\"field\">"
                "<label for=\"f-password\">Password</label><input id=\"f-password\" type=\"password\" name=\"password\""
                " autocomplete=\"current-password\"></div><button>Log in</button></form>\n");
    foot(b);
    return message ? 401 : 200;
}
