/// A failure the user should read without the usage text: printed as `Error: …`, exit status 1.
public struct CommandFailure: Error, CustomStringConvertible {
    /// What went wrong, naming the culprit.
    public var description: String

    /// A failure reading `description`.
    public init(_ description: String) { self.description = description }
}
