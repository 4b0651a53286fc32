/* SPDX-License-Identifier: MIT */
/* banned.h - functions that invite overflows: every .c of src/ includes it
 * after all other headers (system headers declare these names), so using
 * one fails to compile. tests/integration/test_layers.sh checks it is there. */
#ifndef VIGIL_BANNED_H
#define VIGIL_BANNED_H
#define BANNED(f) sorry_##f##_is_banned
#undef strcpy
#define strcpy(a, b) BANNED(strcpy)
#undef strcat
#define strcat(a, b) BANNED(strcat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(a, b) BANNED(strtok)
#undef atoi
#define atoi(a) BANNED(atoi)
#undef gets
#define gets(a) BANNED(gets)
#endif
