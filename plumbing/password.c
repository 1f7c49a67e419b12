#include "password.h"

#include <sodium.h>
#include <string.h>

static int ready(void) { return sodium_init() < 0 ? -1 : 0; }

const char *xqf_user_name_problem(const char *name)
{
    size_t len = strlen(name);
    if (len == 0 || len > XQF_USER_NAME_MAX
        || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != len)
        return "a user name is 1-64 letters, digits, '_', '.' or '-'";
    return NULL;
}

const char *xqf_role_problem(const char *role)
{
    if (strcmp(role, "viewer") != 0 && strcmp(role, "tester") != 0 && strcmp(role, "admin") != 0)
        return "the role is viewer, tester or admin";
    return NULL;
}

const char *xqf_password_problem(const char *password)
{
    size_t len = strlen(password);
    if (len < XQF_PASSWORD_MIN)
        return "the password must have at least 8 characters";
    if (len > XQF_PASSWORD_MAX)
        return "the password may have at most 1024 characters";
    return NULL;
}

int xqf_password_hash(const char *password, char out[XQF_PWHASH_MAX])
{
    _Static_assert(XQF_PWHASH_MAX == crypto_pwhash_STRBYTES, "XQF_PWHASH_MAX");
    if (ready() != 0)
        return -1;
    return crypto_pwhash_str(out, password, strlen(password), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                             crypto_pwhash_MEMLIMIT_INTERACTIVE) == 0 ? 0 : -1;
}

bool xqf_password_verify(const char *hash, const char *password)
{
    if (ready() != 0 || strnlen(hash, XQF_PWHASH_MAX) >= XQF_PWHASH_MAX)
        return false;
    return crypto_pwhash_str_verify(hash, password, strlen(password)) == 0;
}

int xqf_token(char out[XQF_TOKEN_HEX + 1])
{
    unsigned char bytes[XQF_TOKEN_HEX / 2];
    if (ready() != 0)
        return -1;
    randombytes_buf(bytes, sizeof bytes);
    sodium_bin2hex(out, XQF_TOKEN_HEX + 1, bytes, sizeof bytes);
    return 0;
}

void xqf_token_hash(const char *text, char out[XQF_TOKEN_HEX + 1])
{
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(digest, (const unsigned char *)text, strlen(text));
    sodium_bin2hex(out, XQF_TOKEN_HEX + 1, digest, sizeof digest);
}

void xqf_token_mac(const char *key, const char *text, char out[XQF_TOKEN_HEX + 1])
{
    unsigned char mac[crypto_auth_hmacsha256_BYTES];
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, (const unsigned char *)key, strlen(key));
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)text, strlen(text));
    crypto_auth_hmacsha256_final(&st, mac);
    sodium_bin2hex(out, XQF_TOKEN_HEX + 1, mac, sizeof mac);
}

bool xqf_token_equal(const char *a, const char *b)
{
    size_t n = strlen(a);
    return n == strlen(b) && n > 0 && sodium_memcmp(a, b, n) == 0;
}
