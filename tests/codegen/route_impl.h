/* route_impl.h — what the end-to-end tests read back from route_impl.c. */
#ifndef ROUTE_IMPL_H
#define ROUTE_IMPL_H
#include <stdbool.h>
/* The backend of the implementation that ran last ("flex", "ndarray"). */
extern const char *route_last_backend;
/* Set: FlexOnly::only's Flex implementation fails without an error. */
extern bool route_fail_quietly;
#endif
