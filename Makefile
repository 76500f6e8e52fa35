# Shortcuts for the scripts; the README's two commands are the scripts themselves.
.PHONY: demo test bench fuzz
demo:
	./scripts/demo
test:
	./scripts/test
bench:
	PATH=/opt/swift/usr/bin:$$PATH ./scripts/bench
fuzz:
	./scripts/fuzz 60
