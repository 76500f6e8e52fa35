"""The peer programs the figures are measured beside, one module each: mpd and Snapcast (ffmpeg's
side of the render figure is a single command, in `benchmarks.figures.render`)."""
