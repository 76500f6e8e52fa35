#if canImport(Glibc)
import Glibc
#endif

/// How a failed system call is said: "cannot ACTION (the system's words for errno)". Called
/// right after the call that failed, before anything else can set errno.
func systemFailure(_ action: String) -> String {
    "cannot \(action) (\(String(cString: strerror(errno))))"
}
