/// Who is dormant (issue 17): a member whose last head is older than the horizon no longer
/// holds up tombstone collection.
///
/// Against what is "older" judged? Not this device's own clock alone: a device that was itself
/// cut off past the horizon (its network down, its folder not syncing) would then see every
/// other member as dormant and collect its own old deletes, and its snapshot would turn the
/// others' later edits of those items into siblings on every device. The rule: a member is
/// dormant when another member's head (the newest this device holds from anyone but the
/// member and itself, and never later than this device's clock) is newer than the member's
/// by more than the horizon. A device that was itself isolated holds only old heads from
/// everyone, so to it nobody is dormant until it hears from the circle again; a device that
/// hears from the others sees the one that is really away fall behind them.
///
/// That needs heads that move while a member is alive but idle: a head carries the author's
/// own physical time rounded down to an eighth of the horizon (`headWallMillis`; not its
/// hybrid clock, which adopts any peer's clock however far ahead), so an idle member's head
/// changes a few times per horizon, never more (the agent publishes it when it changes), and
/// a live member never looks dormant to another live one. A received head more than the skew
/// limit ahead of this device's clock keeps no time here (`observe(head:)`).
///
/// In a circle of two there is no one else to vouch: "the other device is away" and "this
/// device is cut off" look the same from here. There this device's own clock decides, as
/// before (the device that comes back keeps its offline edits as conflict siblings); removing
/// a lost device (`arca sync remove`) ends the wait in any circle.
extension SyncReplica {
    /// Active members (not this device) that are dormant (see the extension's doc). A member
    /// with no head seen yet is not dormant (it may be joining right now), nor one whose head
    /// is in the format before the horizon (ARH1, time 0: such a peer may not know snapshots).
    public var dormantMembers: Set<DeviceID> {
        Set(circle.activeDevices.filter { dormantSince($0) != nil })
    }

    /// The time `member`'s last head carries, if `member` is dormant.
    public func dormantSince(_ member: DeviceID) -> UInt64? {
        guard member != device, let wall = headWalls[member], wall > 0, let witness = witnessMillis(for: member)
        else { return nil }
        return witness > wall && witness - wall > horizonMillis ? wall : nil
    }

    /// The time `member`'s head is judged against: the newest head of another member (not
    /// this device, not `member`), capped at this device's clock; this device's clock in a
    /// circle of two; nil when no other member's head is known yet.
    func witnessMillis(for member: DeviceID) -> UInt64? {
        let now = clock.physicalMillis()
        let others = circle.activeDevices.filter { $0 != device && $0 != member }
        guard !others.isEmpty else { return now }
        return others.compactMap { headWalls[$0] }.max().map { min($0, now) }
    }

    /// The time this device's head carries: its physical time rounded down to an eighth of the
    /// horizon (the liveness above).
    public var headWallMillis: UInt64 {
        let step = max(horizonMillis / 8, 1)
        return clock.physicalMillis() / step * step
    }
}
