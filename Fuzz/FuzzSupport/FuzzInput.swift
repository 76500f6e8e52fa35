import Foundation

#if FUZZING
/// libFuzzer's driver (in the runtime `-sanitize=fuzzer` links): parses libFuzzer's options and
/// calls `callback` with each input.
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                             _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

/// The target's body, for the C callback (set once, before the driver starts).
nonisolated(unsafe) private var fuzzBody: ([UInt8]) -> Void = { _ in }
#endif

/// How a fuzz target runs. Built with `-DFUZZING -sanitize=fuzzer` (see `scripts/fuzz`),
/// libFuzzer drives it; built normally, the same executable replays the inputs named on its
/// command line (files, or folders of them), so that an input libFuzzer saved is rerun under a
/// debugger or kept as a regression (Fuzz/regressions/).
public enum FuzzInput {
    /// The target's `main`: runs `body` under libFuzzer or on saved inputs, as built.
    public static func main(_ body: @escaping ([UInt8]) -> Void) {
        #if FUZZING
        fuzzBody = body
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv) { data, size in
            fuzzBody(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
            return 0
        })
        #else
        replay(body)
        #endif
    }

    /// Runs `body` on every file named in the arguments (each folder's files in name order), and
    /// prints how many; exits with status 2 when there is nothing to replay.
    public static func replay(_ body: ([UInt8]) -> Void) {
        let paths = CommandLine.arguments.dropFirst().flatMap { path -> [String] in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [] }
            guard isDirectory.boolValue else { return [path] }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            return names.sorted().map { (path as NSString).appendingPathComponent($0) }
        }
        guard !paths.isEmpty else {
            FileHandle.standardError.write(Data("usage: \(CommandLine.arguments[0]) FILE|FOLDER...\n".utf8))
            exit(2)
        }
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            body([UInt8](data))
        }
        print("replayed \(paths.count) input(s)")
    }

    /// Fails the run when `condition` does not hold: libFuzzer saves the input that broke it.
    public static func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        if !condition() { fail(message()) }
    }

    /// Fails the run: an invariant is broken (libFuzzer saves the input).
    public static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("invariant broken: \(message)\n".utf8))
        abort()
    }
}
