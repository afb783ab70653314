import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What a spawned child inherits of this process's descriptors: nothing above standard error.
/// This process's sockets are not close-on-exec (SwiftNIO opens its sockets without
/// SOCK_CLOEXEC), and a daemon a child leaves behind (`pg_ctl start`'s postmaster, a failover
/// node's keeper) would keep an inherited listening socket in LISTEN after its server closed it.
public enum InheritedDescriptors {
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), looked up at run
    /// time: Swift's Glibc module does not import it. 0 where it is missing.
    private static let addCloseFromAddress = UInt(bitPattern: dlsym(nil, "posix_spawn_file_actions_addclosefrom_np"))

    /// Makes the child close every descriptor above 2 before it runs the program: all at once
    /// where glibc can, else each one open now (from /proc/self/fd, as Foundation does).
    public static func close(in actions: inout posix_spawn_file_actions_t) {
        if let address = UnsafeMutableRawPointer(bitPattern: addCloseFromAddress) {
            let addCloseFrom = unsafeBitCast(address, to: AddCloseFrom.self)
            if addCloseFrom(&actions, 3) == 0 { return }
        }
        let open = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
        for descriptor in open where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }
}
