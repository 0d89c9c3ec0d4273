// swift-tools-version:6.0
// A package outside Arca that depends on its two library products by path, as
// an application would (Tests/integration/50-consumer-package.sh builds and runs
// it). ARCA_ROOT names the Arca checkout; the package identity SwiftPM gives a
// path dependency is its directory name.
import Foundation
import PackageDescription

let root = Context.environment["ARCA_ROOT"] ?? "../.."
let identity = URL(fileURLWithPath: root).standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "ArcaConsumer",
    dependencies: [.package(path: root)],
    targets: [
        .executableTarget(
            name: "ArcaConsumer",
            dependencies: [
                .product(name: "Arca", package: identity),
                .product(name: "ArcaSecurity", package: identity),
            ])
    ]
)
