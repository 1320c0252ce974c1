/*
 * fs.c - small file-system helpers
 */
#include "config.h"

#include <sys/stat.h>
#include <errno.h>
#include <string.h>

#include "gate/util/fs.h"

int
fs_mkdir_p(const char *dir, mode_t mode)
{
	char p[4096];
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != 0)
			continue;
		p[i] = 0;
		if (mkdir(p, mode) == 0) {
			/* exactly mode, whatever the umask */
			if (chmod(p, mode) < 0)
				return -1;
		} else if (errno != EEXIST)
			return -1;
		p[i] = i < n ? '/' : 0;
	}
	return 0;
}
