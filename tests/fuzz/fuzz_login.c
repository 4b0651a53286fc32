/* SPDX-License-Identifier: MIT */
/* fuzz_login.c - what a sign-in request brings: the return_to target, the
 * Origin/Referer/Host check, user names, and a password checked against a
 * stored hash: "RETURN_TO\0ORIGIN\0REFERER\0HOST\0NAME\0PASSWORD". */
#include "fuzz.h"
#include "server/login.h"
#include "server/users.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* "secret", 1,000 rounds: the fewest users_password_verify takes */
	static const char *stored = "pbkdf2-sha256$1000$MDEyMzQ1Njc4OWFiY2RlZg==$tiKWHy4FAGCWE8gn6GtKhaxD2OeeAUUWXFT/p1aaNl8=";
	char *part[6], *s = fuzz_fields(data, size, part, 6), msg[256];

	(void)login_return_to_ok(part[0]);
	(void)login_same_site(*part[1] ? part[1] : NULL, *part[2] ? part[2] : NULL, *part[3] ? part[3] : NULL);
	(void)users_name_check(part[4], msg, sizeof(msg));
	if (strlen(part[5]) < 64 && users_password_verify(part[5], stored) != !strcmp(part[5], "secret"))
		abort(); /* only the password matches */
	free(s);
	return 0;
}
