import ArcaProtocol

/// The sync requests of the agent and the CLI (issue 17): one entry from the dispatcher.
extension Daemon {
    func syncRequest(_ request: Request, peer: PeerCredentials) throws(HandlerError) -> Reply {
        switch request {
        case .syncJoin(let uid, _), .syncApprove(let uid, _, _), .syncPull(let uid, _), .syncPush(let uid, _),
            .syncRemove(let uid, _), .syncStatus(let uid), .syncConflicts(let uid), .syncResolve(let uid, _, _):
            try authorize(peer, for: uid)
            throw HandlerError(.notAvailable, "not implemented yet")
        default:
            throw HandlerError.param("not a sync request")
        }
    }
}
