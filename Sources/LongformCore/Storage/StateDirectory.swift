#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where Longform's programs keep what lasts from one run to the next (the player's playlist, a
/// speaker's device rates): `$XDG_STATE_HOME/longform`, or `~/.local/state/longform`.
public enum StateDirectory {
    /// The default directory for `environment` (an absolute `XDG_STATE_HOME`, else `HOME`).
    public static func defaultPath(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return trimmed(state) + "/longform" }
        let home = environment["HOME"] ?? passwordHome() ?? "/"
        return trimmed(home) + "/.local/state/longform"
    }

    /// The default directory for this process's environment.
    public static func defaultPath() -> String {
        defaultPath(environment: ["XDG_STATE_HOME", "HOME"].reduce(into: [:]) { environment, name in
            if let value = getenv(name) { environment[name] = String(cString: value) }
        })
    }

    /// The user's home directory in the password database.
    private static func passwordHome() -> String? {
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }

    /// `path` without a trailing slash (but the root's).
    private static func trimmed(_ path: String) -> String {
        path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }
}
