#include <alsa/asoundlib.h>

// ALSA prints its own errors to stderr; Longform reports them itself, naming the route.
static void longform_alsa_quiet(const char *file, int line, const char *function, int err, const char *fmt, ...) {}
static inline void longform_alsa_silence_errors(void) { snd_lib_error_set_handler(longform_alsa_quiet); }
