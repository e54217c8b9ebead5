/*
 * tests/fuzz/replay.c — runs a fuzz harness on files, without libFuzzer
 * (make test): every argument is a file or a directory of files, each fed
 * once to LLVMFuzzerTestOneInput.  A harness that crashes or aborts takes
 * the process down with the file named on stderr just before, so a
 * regression input is a test case with no fuzzer installed.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            unsigned char *g = realloc(buf, cap * 2);
            if (!g) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = g;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    fprintf(stderr, "replay: %s\n", path);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int cmp(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

int main(int argc, char **argv)
{
    int n = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            bad = 1;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad |= run_file(argv[i]) != 0;
            n++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) {
            perror(argv[i]);
            bad = 1;
            continue;
        }
        char **names = NULL;
        size_t nn = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char **g = realloc(names, (nn + 1) * sizeof *names);
            size_t l = strlen(argv[i]) + strlen(e->d_name) + 2;
            char *p = malloc(l);
            if (!g || !p) {
                free(p);
                fprintf(stderr, "replay: out of memory\n");
                return 2;
            }
            names = g;
            snprintf(p, l, "%s/%s", argv[i], e->d_name);
            names[nn++] = p;
        }
        closedir(d);
        qsort(names, nn, sizeof *names, cmp);
        for (size_t k = 0; k < nn; k++) {
            bad |= run_file(names[k]) != 0;
            n++;
            free(names[k]);
        }
        free(names);
    }
    printf("replay: %d input(s)%s\n", n, bad ? ", some unreadable" : ", all ran");
    return bad;
}
