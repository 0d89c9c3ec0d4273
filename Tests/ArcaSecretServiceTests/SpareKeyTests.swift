import ArcaCrypto
import Foundation
import Testing

@testable import ArcaSecretService

/// arca-secretd's next DH key pair, made on a thread as soon as one is taken.
@Suite struct SpareKeyTests {
    /// Waits (up to 10 s, for a loaded machine) until a made pair sits in `spare`.
    static func waitReady(_ spare: SpareKey) {
        for _ in 0..<1000 where !spare.isReady { usleep(10_000) }
    }

    @Test func takingAPairStartsTheNextAndNoPairIsHandedOutTwice() throws {
        let spare = SpareKey()
        #expect(!spare.isReadyOrMaking)
        let first = try spare.take()  // none ready: made inline; the next is on its way
        #expect(spare.isReadyOrMaking)
        Self.waitReady(spare)
        #expect(spare.isReady)
        let second = try spare.take()
        Self.waitReady(spare)
        let third = try spare.take()
        let keys = Set([first.publicKey, second.publicKey, third.publicKey])
        #expect(keys.count == 3)
        #expect(keys.allSatisfy { $0.count == DHSession.width })
    }

    @Test func aSparePairAgreesWithTheClientOnTheSharedSecret() throws {
        let spare = SpareKey()
        spare.fill()  // the bus loop's way, once idle
        #expect(spare.isReady)
        let ours = try spare.take()
        let client = try DHKeyPair.generate()
        let a = try ours.sharedSecret(with: client.publicKey).withUnsafeBytes { Array($0) }
        let b = try client.sharedSecret(with: ours.publicKey).withUnsafeBytes { Array($0) }
        #expect(a == b)
        #expect(a.count == DHSession.width)
    }

    @Test func fillMakesNothingWhileAPairIsReady() throws {
        let spare = SpareKey()
        spare.fill()
        let ready = try #require(spare.peekPublicKey)
        spare.fill()
        #expect(spare.peekPublicKey == ready)
        #expect(try spare.take().publicKey == ready)
    }
}
