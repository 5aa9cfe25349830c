/* route_impl.h — what the end-to-end tests read back from route_impl.c. */
#ifndef ROUTE_IMPL_H
#define ROUTE_IMPL_H
/* The backend of the implementation that ran last ("flex", "ndarray"). */
extern const char *route_last_backend;
#endif
