import FacewireRuntime
import Foundation
import Testing

@Suite("ParentLifeline: which process a child watches, and when it is gone")
struct ParentLifelineTests {
    @Test("the watched PID comes from the environment; absent, malformed or absurd values watch nothing")
    func expectedParent() {
        let key = ParentLifeline.environmentKey
        #expect(ParentLifeline.expectedParent(environment: [key: "4242"]) == 4242)
        for bad in ["", "abc", "0", "1", "-5", "4194305", "99999999999999999999", " 42", "42 ", "0x10"] {
            #expect(ParentLifeline.expectedParent(environment: [key: bad]) == nil, "\(bad)")
        }
        #expect(ParentLifeline.expectedParent(environment: [:]) == nil)
    }

    @Test("gone when the watched process no longer exists or this one was re-parented")
    func gone() {
        #expect(!ParentLifeline.parentGone(watchedExists: true, initialParent: 100, currentParent: 100))
        #expect(ParentLifeline.parentGone(watchedExists: false, initialParent: 100, currentParent: 100))
        #expect(ParentLifeline.parentGone(watchedExists: true, initialParent: 100, currentParent: 1))
    }

    @Test("a child's environment names this process and keeps the rest")
    func childEnvironment() {
        let environment = ParentLifeline.childEnvironment(["PATH": "/bin", ParentLifeline.environmentKey: "7"])
        #expect(environment["PATH"] == "/bin")
        #expect(environment[ParentLifeline.environmentKey] == String(getpid()))
        #expect(ParentLifeline.expectedParent(environment: environment) == getpid())
    }
}
