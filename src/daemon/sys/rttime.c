/* rttime.c: RLIMIT_RTTIME judged once (see rttime.h). */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>

#include "daemon/sys/rttime.h"

void rttime_judge(const struct proc_rlimits *l, long max_hard, struct rttime_judgement *j)
{
	memset(j, 0, sizeof(*j));
	if (!l)
		return;
	if (l->rttime_hard == RLIM_INFINITY)
		snprintf(j->hard, sizeof(j->hard), "unlimited");
	else
		snprintf(j->hard, sizeof(j->hard), "%llu", (unsigned long long)l->rttime_hard);
	/* the soft limit can go up to the hard one without CAP_SYS_RESOURCE */
	j->suggest_soft = l->rttime_hard == RLIM_INFINITY || l->rttime_hard > RTTIME_SUGGEST_USEC ?
			  RTTIME_SUGGEST_USEC : l->rttime_hard;
	if (max_hard > 0 && (l->rttime_hard == RLIM_INFINITY || l->rttime_hard > (rlim_t)max_hard))
		j->verdict = RTTIME_OVER_MAX;
	else if (l->rttime_soft == 0)
		j->verdict = RTTIME_ZERO;
	else if (l->rttime_soft == RLIM_INFINITY)
		j->verdict = RTTIME_UNLIMITED;
	else
		j->verdict = RTTIME_BOUNDED;
}
