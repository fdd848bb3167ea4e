# Herald's developer entry points. `make dev` runs the whole stack locally; `make test` is the only
# test command (CI runs it through .ci/run). Both install what is missing first.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
# deps and deps-browser may both call apt-get, which takes a lock: never run targets in parallel.
.NOTPARALLEL:
.DEFAULT_GOAL := help

.PHONY: help deps deps-browser deps-bench dev stop test lint typecheck build bench soak clean compose-up compose-down test-deploy cluster-up cluster-down test-cluster backup restore

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-13s %s\n", $$1, $$2}'

deps: ## install what is missing: node_modules, the pinned nats-server and nats CLI (go install), PostgreSQL, openssl
	@scripts/deps.sh

deps-browser: ## install chromium for the browser tests when it is missing
	@scripts/deps.sh browser

deps-bench: ## install the bench's peer when missing: Centrifugo (pinned, go install) and redis-server
	@scripts/deps.sh bench

dev: deps ## run the whole stack locally (data in .data/); Ctrl-C stops it
	@scripts/dev.sh

stop: ## stop a `make dev` stack that lost its terminal
	@scripts/dev-stop.sh

.PHONY: example screenshots
screenshots: deps deps-browser ## every dashboard page at 1366 and 375 px into docs/screenshots/ (and docs/dashboard.png), on a stack of its own
	npx tsx --conditions=herald-source scripts/dashboard-screenshots.ts

example: ## the React bell example on https://localhost:5173, against a running `make dev`
	@scripts/example.sh

test: deps deps-browser deps-bench ## run every test (vitest, real nats-server and Postgres)
	npx vitest run

lint: deps ## biome, the TypeScript compiler, the import direction (no circles, no upward arrow), deploy/nats/users.conf as proto renders it, and `docker compose config` of every compose file
	npx biome check .
	npx tsc -p tsconfig.json
	npx depcruise --config .dependency-cruiser.cjs proto/src lib services bench clients
	npm run -s nats-users -- --check
	@scripts/compose-lint.sh

typecheck: deps ## the TypeScript compiler only
	npx tsc -p tsconfig.json

build: deps ## compile every workspace that has a build script into its dist/
	npm run build --workspaces --if-present

bench: deps deps-bench ## run the benchmarks against Centrifugo and the baselines (bench/run.ts)
	@# Every connection is a descriptor: raise the soft limit to the hard one. QUICK=1: the smoke run CI runs.
	@ulimit -n "$$(ulimit -Hn)" 2>/dev/null || true; \
	  node --conditions=herald-source --import tsx bench/run.ts

soak: deps ## the whole stack (SOAK_TARGET=dev, or compose) for SOAK_MINUTES (10) under churn, restarts and steady load: every event delivered, memory slopes (bench/results/soak-*/)
	@scripts/soak.sh

compose-up: deps ## run the docker compose stack (deploy/): engine, images, certificates, demo key; prints HERALD_* lines
	@scripts/compose.sh up

compose-down: ## stop the docker compose stack; its volumes (queued events, accounts) are kept
	@scripts/compose.sh down

test-deploy: deps ## the compose stack as real containers, on its own ports: quickstart, restarts, kill, backups
	@scripts/test-deploy.sh

cluster-up: deps ## Herald scaled out in docker compose: 3 NATS nodes, 2 ingresses, 2 edges behind HAProxy; prints HERALD_* lines
	@scripts/cluster.sh up

cluster-down: ## stop the cluster; its volumes are kept
	@scripts/cluster.sh down

test-cluster: deps ## the cluster under steady load through node kills, a partition, edge and ingress kills, rolling restarts; a backup restored into a fresh cluster
	@scripts/test-cluster.sh

# make backup / make restore: which stack (compose, the default, or cluster) and the backup folder.
STACK ?= compose
BACKUP_DIR ?=
backup_script = $(if $(filter compose,$(STACK)),scripts/compose.sh,$(if $(filter cluster,$(STACK)),scripts/cluster.sh,$(error STACK=$(STACK): must be compose or cluster)))

backup: ## BACKUP_DIR=DIR [STACK=compose|cluster]: Postgres dump and JetStream snapshot of the running stack into DIR (empty or new)
	@[[ -n "$(BACKUP_DIR)" ]] || { echo 'make backup: name the folder, e.g. BACKUP_DIR=/srv/herald-backup/$$(date +%F)' >&2; exit 2; }
	@$(backup_script) backup "$(BACKUP_DIR)"

restore: ## BACKUP_DIR=DIR [STACK=compose|cluster]: put a backup back (the Herald services stop meanwhile; works on empty volumes)
	@[[ -n "$(BACKUP_DIR)" ]] || { echo 'make restore: name the backup folder, BACKUP_DIR=DIR' >&2; exit 2; }
	@$(backup_script) restore "$(BACKUP_DIR)"

clean: ## stop the dev stack, then delete .data/ and every dist/
	@scripts/dev-stop.sh
	rm -rf .data proto/dist lib/*/dist services/*/dist clients/*/dist
