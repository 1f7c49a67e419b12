#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

int sha256_fd(int fd, char hex[SHA256_HEX_LEN + 1])
{
    crypto_hash_sha256_state st;
    unsigned char buf[1 << 16], digest[crypto_hash_sha256_BYTES];
    if (sodium_init() < 0 || lseek(fd, 0, SEEK_SET) != 0)
        return -1;
    crypto_hash_sha256_init(&st);
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        crypto_hash_sha256_update(&st, buf, (size_t)n);
    }
    crypto_hash_sha256_final(&st, digest);
    sodium_bin2hex(hex, SHA256_HEX_LEN + 1, digest, sizeof digest);
    return 0;
}

int sha256_file(const char *path, char hex[SHA256_HEX_LEN + 1])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = sha256_fd(fd, hex);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

int sha256_memory(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1])
{
    unsigned char digest[crypto_hash_sha256_BYTES];
    if (sodium_init() < 0)
        return -1;
    crypto_hash_sha256(digest, data, len);
    sodium_bin2hex(hex, SHA256_HEX_LEN + 1, digest, sizeof digest);
    return 0;
}
