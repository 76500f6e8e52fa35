# Shortcuts for the scripts; the README's two commands are the scripts themselves.
.PHONY: demo test bench
demo:
	./scripts/demo
test:
	./scripts/test
bench:
	PATH=/opt/swift/usr/bin:$$PATH ./scripts/bench
