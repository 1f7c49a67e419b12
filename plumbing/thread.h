/*
 * thread.h - the calling thread's own scheduling.
 */
#ifndef XQF_THREAD_H
#define XQF_THREAD_H

/*
 * Lowers the calling thread's priority by inc nice steps (Linux keeps a
 * nice value per thread; other threads keep theirs).  Without privilege
 * it cannot be raised again: give it to threads that end with their work.
 * 0, or -1 with errno.
 */
int thread_nice(int inc);

#endif
