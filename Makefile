# Kerf developer entry points. `make test` is what CI runs.
.PHONY: test sim plan bench catalog openapi fixtures fuzz lambda package

test:
	scripts/test.sh

# The getting-started walkthrough on the local simulated cluster.
sim:
	cargo run --profile cli -p kerf-cli -- sim

plan:
	cargo run -q -p kerf-cli -- plan examples/getting-started/

catalog:
	python3 scripts/gen-catalog.py

# The built-in kinds' OpenAPI schemas the in-process API server publishes (from the Go module
# cache; `go mod download` fetches kube-apiserver's published OpenAPI when it is not there).
openapi:
	python3 scripts/gen-openapi.py

# Test fixtures extracted from the seed walkthroughs in ../shared/seeds.
fixtures:
	python3 scripts/extract-seed-manifests.py

bench:
	cargo bench -p kerf-cli --bench plan

# Fuzz targets (cargo-fuzz, installed when missing), 60 s each; FUZZ_SECONDS=600 for longer.
fuzz:
	scripts/fuzz.sh

# Lambda artifacts use the fat-LTO packaging profile. Its output directory is also where
# cargo-lambda keeps one directory per binary (make package): those go first.
lambda:
	rm -rf $(dir $(wildcard target/lambda/*/bootstrap))
	cargo build --profile lambda --workspace --bins

# The deployable artifacts: `sam build` of every function (cargo-lambda and zig from .venv,
# arm64), then each function's zipped size. `sam deploy` uploads .aws-sam/build.
package:
	scripts/setup.sh package
	scripts/package.sh
