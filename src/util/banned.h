/* SPDX-License-Identifier: MIT */
/* banned.h - functions that invite overflows; included by every .c via the
 * Makefile (-include) so using one fails to compile. */
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
