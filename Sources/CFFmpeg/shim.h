#ifndef LONGFORM_CFFMPEG_SHIM_H
#define LONGFORM_CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
#include <libavutil/error.h>
#include <libswresample/swresample.h>

// AVERROR(EAGAIN) and AVERROR_EOF are macros Swift cannot import.
static inline int longform_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int longform_averror_eof(void) { return AVERROR_EOF; }
static inline int64_t longform_av_nopts_value(void) { return AV_NOPTS_VALUE; }
#endif
