#include <pulse/simple.h>
#include <pulse/error.h>
#include <pulse/pulseaudio.h>
