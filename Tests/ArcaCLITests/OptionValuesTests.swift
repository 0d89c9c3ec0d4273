import Testing

@testable import ArcaCLI

@Suite("The options of one command line (OptionValues)")
struct OptionValuesTests {
    @Test("a value, a flag and an absent option read back distinctly")
    func valuesFlagsAndAbsence() {
        var options: OptionValues = [:]
        options[.service] = "mail"
        options[.json] = .some(nil)
        #expect(options[.service] == .some("mail"))
        #expect(options[.json] == .some(nil))
        #expect(options[.account] == nil)
        #expect(options.keys == [.service, .json])
    }

    @Test("setting a value again replaces it in place; setting nil removes the option")
    func replaceAndRemove() {
        var options: OptionValues = [.service: "mail", .account: "alice"]
        options[.service] = "web"
        #expect(options.keys == [.service, .account])
        #expect(options[.service] == .some("web"))
        options[.service] = nil
        #expect(options[.service] == nil)
        #expect(options.keys == [.account])
        options[.label] = nil
        #expect(options.keys == [.account])
    }

    @Test("equality ignores order but not values or flags")
    func equality() {
        let a: OptionValues = [.service: "mail", .json: nil]
        let b: OptionValues = [.json: nil, .service: "mail"]
        #expect(a == b)
        #expect(a != [.service: "mail"])
        #expect(a != [.service: "mail", .json: "x"])
        #expect(a != [.service: "web", .json: nil])
    }

    @Test("the parser fills them: get -s mail -a alice --json")
    func parsed() throws {
        let command = try Parser.parse(["get", "-s", "mail", "-a", "alice", "--json"])
        #expect(command.options == [.service: "mail", .account: "alice", .json: nil])
        #expect(command.value(.service) == "mail")
        #expect(command.wantsJSON)
    }
}
