/*
 * A library planted where `mge` must never load one from (the current folder,
 * a shared temporary folder, a link out of the cache). Loading it runs its
 * constructor, which writes the file MGE_TEST_PLANTED names: the test's proof
 * that it was loaded. It is no Lite library, so nothing else happens.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void planted(void) {
    const char *marker = getenv("MGE_TEST_PLANTED");
    FILE *file = marker ? fopen(marker, "w") : NULL;
    if (file) {
        fputs("loaded\n", file);
        fclose(file);
    }
}
