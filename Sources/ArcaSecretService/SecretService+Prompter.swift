import ArcaClient
import ArcaCrypto
import ArcaProtocol
import Synchronization

/// An unlock prompt shown by the desktop's system prompter (gcr's
/// `org.gnome.keyring.SystemPrompter`, interface `org.gnome.keyring.internal.Prompter`,
/// as gnome-shell and gcr-prompter serve it). arca-secretd is the prompting client:
/// it exports a callback object, calls BeginPrompting; the prompter calls
/// PromptReady when it may show a prompt, arca-secretd calls PerformPrompt with its
/// half of a secret exchange, and the prompter calls PromptReady again with the
/// answer (`yes` and the encrypted password, or `no`). The password goes to arcad as
/// `arca unlock` sends it; a wrong one is asked again (with a warning) up to
/// ``SecretService/promptAttempts`` times.
struct PromptFlow {
    enum Stage {
        /// BeginPrompting sent; waiting for the prompter's first PromptReady.
        case waitingForPrompter
        /// PerformPrompt sent; waiting for the answer.
        case asking
        /// arcad is checking the password.
        case checking
    }

    /// The Secret Service prompt.
    let prompt: String
    /// Who called Prompt (the only one told of completion).
    let caller: String
    /// The objects to unlock, returned on success.
    let objects: [String]
    /// The prompter's unique name: only it may call the callback.
    let prompter: String
    let exchange: SecretExchange
    let window: String
    var stage = Stage.waitingForPrompter
    var attempts = 0
}

/// Password checks finished on worker threads, for the bus thread.
final class PromptChecks: Sendable {
    private let done = Mutex<[(callback: String, status: ArcaStatus?)]>([])

    func post(_ callback: String, _ status: ArcaStatus?) { done.withLock { $0.append((callback, status)) } }

    func take() -> [(callback: String, status: ArcaStatus?)] {
        done.withLock { d in
            defer { d.removeAll() }
            return d
        }
    }
}

extension SecretService {
    static let prompterName = "org.gnome.keyring.SystemPrompter"
    static let prompterPath = "/org/gnome/keyring/Prompter"
    static let prompterInterface = "org.gnome.keyring.internal.Prompter"
    static let callbackInterface = "org.gnome.keyring.internal.Prompter.Callback"
    static let callbackBase = "/org/gnome/keyring/Prompt"
    /// Password attempts per prompt.
    static let promptAttempts = 3

    /// Prompt(): with a system prompter on the bus, asks it for the login password;
    /// without one, completes dismissed at once (never hangs).
    func runPrompt(_ id: String, window: String, caller: String) throws {
        guard let pending = prompts[id], pending.owner == caller else { throw SecretError.noSuchObject }
        prompts[id] = nil
        guard let prompter = prompterOwner() else {
            log("prompt \(id): no system prompter on the bus; dismissed (\(pending.unlock.count) objects stay locked)")
            complete(SecretObject.prompt(id).path, caller: caller, dismissed: true, [])
            return
        }
        let callback = Self.callbackBase + "/arca" + id
        do {
            let flow = PromptFlow(
                prompt: id, caller: caller, objects: pending.unlock, prompter: prompter,
                exchange: try SecretExchange.start(), window: window)
            flows[callback] = flow
            try bus.callAsync(
                prompter, Self.prompterPath, Self.prompterInterface, "BeginPrompting", [.objectPath(callback)]
            ) { [unowned self] reply in
                if reply.isError { finishFlow(callback, dismissed: true, stop: false) }
            }
        } catch {
            flows[callback] = nil
            log("prompt \(id): the system prompter failed (\(error)); dismissed")
            complete(SecretObject.prompt(id).path, caller: caller, dismissed: true, [])
        }
    }

    /// The unique name owning the prompter's well-known name, if any.
    private func prompterOwner() -> String? {
        guard
            let reply = try? bus.call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
                [Self.prompterName])
        else { return nil }
        return try? reply.readString()
    }

    /// A method call on a callback object (PromptReady, PromptDone), from the prompter only.
    func prompterCallback(_ message: BusMessage) {
        guard message.isMethodCall else { return }
        let path = message.path ?? ""
        guard var flow = flows[path], message.sender == flow.prompter,
            message.interface == Self.callbackInterface
        else {
            bus.replyError(
                to: message, name: "org.freedesktop.DBus.Error.UnknownObject", message: "no prompt callback at \(path)")
            return
        }
        switch message.member {
        case "PromptReady":
            guard let reply = try? message.readString(), (try? message.readProperties()) != nil,
                let exchange = try? message.readString()
            else {
                bus.replyError(
                    to: message, name: "org.freedesktop.DBus.Error.InvalidArgs", message: "expected (sa{sv}s)")
                return
            }
            bus.reply(to: message, [])
            switch flow.stage {
            case .waitingForPrompter:
                flows[path]?.stage = .asking
                ask(path, warning: nil)
            case .asking where reply == "yes":
                do {
                    guard let password = try flow.exchange.receive(exchange) else {
                        throw SessionCryptoError.badParameter("the answer has no password")
                    }
                    flow.stage = .checking
                    flow.attempts += 1
                    flows[path] = flow
                    check(password, callback: path)
                } catch {
                    log("prompt \(flow.prompt): the prompter's answer does not decrypt (\(error)); dismissed")
                    finishFlow(path, dismissed: true, stop: true)
                }
            case .asking, .checking:
                // "no" or "": the user cancelled.
                finishFlow(path, dismissed: true, stop: true)
            }
        case "PromptDone":
            bus.reply(to: message, [])
            finishFlow(path, dismissed: true, stop: false)
        default:
            bus.replyError(
                to: message, name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no such callback method")
        }
    }

    /// PerformPrompt: a password prompt with our half of the exchange.
    private func ask(_ callback: String, warning: String?) {
        guard let flow = flows[callback] else { return }
        var properties: [String: BusValue] = [
            "title": .string("Unlock your Arca vault"),
            "message": .string("Authentication required"),
            "description": .string(
                "An application wants access to the login collection, but your vault is locked. "
                    + "Enter your login password to unlock it."),
            "password-new": .bool(false),
            "choice-label": .string(""),
            "caller-window": .string(flow.window),
            "continue-label": .string("Unlock"),
            "cancel-label": .string("Cancel"),
        ]
        properties["warning"] = .string(warning ?? "")
        do {
            try bus.callAsync(
                flow.prompter, Self.prompterPath, Self.prompterInterface, "PerformPrompt",
                [.objectPath(callback), .string("password"), .properties(properties), .string(flow.exchange.message)]
            ) { [unowned self] reply in
                if reply.isError { finishFlow(callback, dismissed: true, stop: true) }
            }
        } catch {
            finishFlow(callback, dismissed: true, stop: true)
        }
    }

    /// Sends the password to arcad on a worker thread (Argon2id takes a while); the
    /// bus thread hears of the result through `promptChecks` and a wake.
    private func check(_ password: SecretBytes, callback: String) {
        let uid = arcad.uid
        let socketPath = arcad.socketPath
        let checks = promptChecks
        let wake = self.wake
        Threads.detach {
            var request = Request.unlockWithPassword(uid: uid, password: password.withUnsafeBytes { Array($0) })
            defer { request.wipeSecrets() }
            var status: ArcaStatus? = .internalComponent
            if let client = try? ArcadClient(path: socketPath, timeoutMilliseconds: 60_000),
                let reply = try? client.send(request)
            {
                if case .error(let s, _) = reply { status = s } else { status = nil }
            }
            checks.post(callback, status)
            wake.wake()
        }
    }

    /// Results of password checks: unlocked → done; a wrong password → asked again.
    func deliverPromptChecks() {
        for (callback, status) in promptChecks.take() {
            guard var flow = flows[callback], case .checking = flow.stage else { continue }
            switch status {
            case nil:
                unlocked = arcad.unlockedClasses()
                finishFlow(callback, dismissed: false, stop: true)
            case .authFailed? where flow.attempts < Self.promptAttempts:
                flow.stage = .asking
                flows[callback] = flow
                ask(callback, warning: "The password was not right. Try again.")
            case let other?:
                log("prompt \(flow.prompt): arcad refused the password (\(other)); dismissed")
                finishFlow(callback, dismissed: true, stop: true)
            }
        }
    }

    /// Ends a flow: StopPrompting (unless the prompter ended it), then Completed to the caller.
    func finishFlow(_ callback: String, dismissed: Bool, stop: Bool) {
        guard let flow = flows.removeValue(forKey: callback) else { return }
        if stop {
            try? bus.callAsync(
                flow.prompter, Self.prompterPath, Self.prompterInterface, "StopPrompting", [.objectPath(callback)]
            ) { _ in }
        }
        complete(
            SecretObject.prompt(flow.prompt).path, caller: flow.caller, dismissed: dismissed,
            dismissed ? [] : flow.objects)
    }

    /// The caller or the prompter left the bus: their flows end (the caller is told nothing).
    func flowsGone(with name: String) {
        for (callback, flow) in flows where flow.caller == name || flow.prompter == name {
            if flow.caller == name {
                flows[callback] = nil
                try? bus.callAsync(
                    flow.prompter, Self.prompterPath, Self.prompterInterface, "StopPrompting", [.objectPath(callback)]
                ) { _ in }
            } else {
                finishFlow(callback, dismissed: true, stop: false)
            }
        }
    }

    /// Dismiss() of a prompt being shown.
    func dismissFlow(prompt id: String, caller: String) -> Bool {
        guard let callback = flows.first(where: { $0.value.prompt == id && $0.value.caller == caller })?.key else {
            return false
        }
        finishFlow(callback, dismissed: true, stop: true)
        return true
    }

    func complete(_ promptPath: String, caller: String, dismissed: Bool, _ paths: [String]) {
        bus.emit(promptPath, Interfaces.prompt, "Completed", [.bool(dismissed), .variant(.paths(paths))], to: caller)
    }
}
