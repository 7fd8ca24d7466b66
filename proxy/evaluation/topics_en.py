"""English templates of the long-session generator (written for this harness).

Questions are paraphrases: they name the thing another way ("pre-prod SQL client"
for "staging database", "cellular connection" for "mobile data") so that keyword
overlap alone does not find the answer. Distractors share words with the fact and
differ in entity, condition or unit.
"""

from __future__ import annotations

from proxy.evaluation.topics import CliPref, TaskSet, ToolKey, Topic

FACTS = (
    Topic("fact", "en", "The staging database listens on port {v} when the VPN is up.",
          ("Once I'm connected through the corporate tunnel, which number do I point the "
           "pre-prod SQL client at?",
           "I'm on the company tunnel now: what goes after the colon in the pre-release DB "
           "connection string?"),
          concept="db_port", needle="port {v}", context="VPN", values=(5400, 9800, 7),
          noise=("The production database listens on port {d} behind the load balancer.",
                 "The staging cache answers on port {d}, no VPN needed.")),
    Topic("fact", "en", "On mobile data, the uploader keeps retrying for {v} s before it gives up.",
          ("Over a cellular connection, how long does the app persist in resending a file "
           "before abandoning it?",),
          needle="{v} s", context="mobile data", values=(20, 180, 5),
          noise=("On Wi-Fi, the downloader keeps retrying for {d} s.",
                 "The uploader splits big files into {d} MB chunks.")),
    Topic("fact", "en", "Free-tier accounts can attach files up to {v} MB.",
          ("For people on the no-cost plan, what's the biggest document they can add to a "
           "message?",),
          concept="upload_limit", needle="{v} MB", context="Free-tier", values=(5, 95, 5),
          noise=("Enterprise accounts can attach files up to {d} MB.",
                 "Free-tier accounts can create at most {d} projects.")),
    Topic("fact", "en", "Access tokens expire after {v} minutes unless the user ticks remember-me.",
          ("If someone doesn't choose to stay signed in, how soon does their login credential "
           "stop working?",),
          needle="{v} minutes", context="remember-me", values=(10, 90, 5),
          noise=("Refresh tokens expire after {d} days.",
                 "Password reset links expire after {d} minutes.")),
    Topic("fact", "en", "The public API allows {v} requests per minute for each client IP.",
          ("What's the throttle on the open endpoints, per caller address?",),
          needle="{v} requests per minute", values=(60, 1200, 20),
          noise=("The internal API allows {d} requests per second for each service.",
                 "The public API returns at most {d} items per page.")),
    Topic("fact", "en", "We keep the nightly backups for {v} days in the eu-west bucket.",
          ("How long do we hold on to the snapshots that get taken every evening?",),
          concept="nightly_backup", needle="{v} days", context="nightly", values=(7, 90, 1),
          noise=("We keep the weekly backups for {d} weeks in cold storage.",
                 "The nightly job also rotates logs older than {d} days.")),
    Topic("fact", "en", "Each render worker gets {v} GB of RAM when it runs the batch profile.",
          ("How much memory is allotted per image-generation process in bulk mode?",),
          concept="render_ram", needle="{v} GB", context="batch", values=(2, 64, 2),
          noise=("Each API worker gets {d} GB of RAM.",
                 "The batch profile starts {d} render workers at most.")),
    Topic("fact", "en", "Checkout must answer within {v} ms at p99 during peak hours.",
          ("What tail-response promise do we make for the payment step when traffic is "
           "highest?",),
          needle="{v} ms", context="peak", values=(150, 900, 10),
          noise=("Search must answer within {d} ms at p50.",
                 "Checkout pages weigh about {d} KB after compression.")),
    Topic("fact", "en", "While a sale is running, the catalogue cache TTL is {v} seconds.",
          ("During a promotion, how quickly do shop listings get refreshed from the source of "
           "truth?",),
          needle="{v} seconds", context="sale", values=(5, 120, 5),
          noise=("The profile cache TTL is {d} seconds.",
                 "A sale banner stays on screen for {d} seconds after login.")),
    Topic("fact", "en", "The disk alert fires at {v}% usage on the log volumes.",
          ("At what fill level do we get paged about the storage where logs are written?",),
          needle="{v}%", context="log volumes", values=(70, 95, 1),
          noise=("The CPU alert fires at {d}% usage on the web nodes.",
                 "Log volumes are resized when they stay above {d}% for a week.")),
    Topic("fact", "en", "Pull-request builds are cancelled after {v} minutes.",
          ("How long can a PR pipeline go before it gets killed automatically?",),
          needle="{v} minutes", context="Pull-request", values=(15, 60, 1),
          noise=("Nightly builds may run for {d} minutes.",
                 "Pull-request builds need {d} approvals before merge.")),
    Topic("fact", "en", "When the target is Postgres, the importer writes rows in batches of {v}.",
          ("How many records per insert chunk does the loader use against our relational "
           "database?",),
          needle="batches of {v}", context="Postgres", values=(200, 5000, 100),
          noise=("The exporter reads rows in batches of {d}.",
                 "When the target is BigQuery, the importer streams rows one by one.")),
    Topic("fact", "en", "In production the connection pool is capped at {v} connections per pod.",
          ("What's the ceiling on open DB handles for each live container?",),
          needle="{v} connections", context="production", values=(10, 200, 5),
          noise=("In staging the connection pool is capped at {d} connections per pod.",
                 "Each pod in production handles about {d} requests per second.")),
    Topic("fact", "en", "Messages on the billing queue become visible again after {v} s if "
          "nobody acks them.",
          ("If a consumer grabs an invoice event and never confirms it, when does it reappear "
           "for the others?",),
          needle="{v} s", context="billing queue", values=(30, 600, 10),
          noise=("Messages on the email queue are kept for {d} hours.",
                 "The billing queue holds at most {d} messages.")),
)

DECISIONS = (
    Topic("decision", "en", "We decided to use {v} for the event bus between services.",
          ("Which broker did we settle on for passing messages between our backends?",),
          concept="event_bus", values=("NATS", "Kafka", "RabbitMQ", "Redis Streams", "Pulsar"),
          noise=("We looked at {d} for the event bus but it felt too heavy.",
                 "The analytics team runs {d} for their own pipeline.")),
    Topic("decision", "en", "We decided to host the web frontend on {v}.",
          ("Where is the browser UI going to be deployed?",),
          concept="frontend_host",
          values=("Cloudflare Pages", "Netlify", "Vercel", "Fly.io", "Render"),
          noise=("The docs site is hosted on {d}.",
                 "Someone suggested {d} for the web frontend; we can revisit that later.")),
    Topic("decision", "en", "We decided the mobile app stores its data locally in {v}.",
          ("What on-device database did we pick for the phone client?",),
          concept="mobile_store", values=("SQLite", "Realm", "LevelDB", "ObjectBox"),
          noise=("The desktop app caches its data in {d}.",)),
    Topic("decision", "en", "We decided to write the invoicing service in {v}.",
          ("What language will the billing backend be implemented in?",),
          values=("Rust", "Kotlin", "Elixir", "Scala"),
          noise=("The reporting scripts are written in {d}.",
                 "The invoicing PDFs are rendered by a small {d} tool.")),
    Topic("decision", "en", "We decided to use {v} as the feature-flag service.",
          ("Which toggle provider are we going with to switch functionality on and off?",),
          values=("LaunchDarkly", "Unleash", "Flagsmith", "GrowthBook"),
          noise=("Marketing already pays for {d}, but only for A/B tests.",)),
)

CHAINS = (
    Topic("chain", "en", "The API gateway timeout for long-polling clients is {v} s.",
          ("How long will the edge proxy now hold a held-open poll connection?",),
          needle="{v} s", context="long-polling", values=(20, 300, 5),
          fixes=("Actually, the gateway timeout for long-polling clients is {v} s.",
                 "Correction: make that {v} s for long-polling clients at the gateway."),
          noise=("The gateway timeout for regular REST calls is {d} s.",)),
    Topic("chain", "en", "The staging cluster runs {v} nodes.",
          ("How many machines make up our pre-release Kubernetes environment at this point?",),
          concept="staging_nodes", needle="{v} nodes", context="staging", values=(3, 40, 1),
          fixes=("No, it's {v} nodes in the staging cluster; I checked the console.",
                 "I was wrong again: the staging cluster has {v} nodes since this morning's "
                 "resize."),
          noise=("The production cluster runs {d} nodes.",)),
    Topic("chain", "en", "We will deploy the EU tenants to {v}.",
          ("Which cloud location will host our European customers' data?",),
          values=("eu-west-1", "eu-central-1", "eu-north-1", "eu-south-1"),
          fixes=("Actually, the EU tenants go to {v}, not the region I said before.",
                 "Update: EU tenants will live in {v} after all; legal signed off today."),
          noise=("US tenants are deployed to {d}.",)),
    Topic("chain", "en", "The webhook sender retries each delivery {v} times.",
          ("How many further attempts does a failed callback to a customer endpoint get?",),
          needle="{v} times", context="webhook", values=(2, 15, 1),
          fixes=("Correction: webhook deliveries are retried {v} times.",
                 "Sorry, I got that wrong: the webhook sender retries {v} times per delivery."),
          noise=("The email sender retries each message {d} times.",)),
    Topic("chain", "en", "We decided to use {v} for the search backend.",
          ("What engine will power full-text lookups in the product now?",),
          values=("Elasticsearch", "OpenSearch", "Meilisearch", "Typesense"),
          fixes=("Actually, we'll go with {v} for the search backend instead.",
                 "I meant {v} for the search backend; that's final."),
          noise=("Logs are indexed in {d} by the platform team.",)),
)

PREFS = (
    Topic("pref_chat", "en", "I prefer answers that show the diff before the explanation.",
          ("When you propose a change to code, what should come first in your reply?",),
          needle="diff before the explanation"),
    Topic("pref_chat", "en", "Please always write commit messages in the imperative mood.",
          ("How should the subject lines be phrased when recording changes in git?",),
          needle="imperative mood"),
    Topic("pref_chat", "en", "I like short answers, so skip the pleasantries.",
          ("What tone and length do I want from you?",),
          needle="skip the pleasantries"),
    Topic("pref_chat", "en", "I prefer pytest fixtures over setUp methods in tests.",
          ("Which style of test scaffolding do I favour?",),
          needle="pytest fixtures"),
    Topic("pref_chat", "en", "Never put emojis in code comments, please.",
          ("Is there anything I've banned from appearing in source annotations?",),
          needle="emojis"),
)

CLI_PREFS = (
    CliPref("en", "code_style", "Code style",
            "Type hints everywhere, lines of at most 100 columns, no wildcard imports",
            "100 columns", "What formatting rules do I want in the Python you write?"),
    CliPref("en", "review_focus", "Review focus",
            "In reviews, flag missing tests before style nits",
            "missing tests before style nits",
            "When you look over a pull request for me, what's the priority order?"),
    CliPref("en", "time_format", "Time format", "Quote all times in UTC with a 24-hour clock",
            "24-hour clock", "How should timestamps be written when you mention them?"),
)

TASK_SETS = (
    TaskSet("en",
            "Goal: move the billing jobs to the new scheduler",
            "Goal: move the billing and payroll jobs to the new scheduler before the audit",
            ("TODO: port the invoice export job", "TODO: add alerts for failed runs",
             "TODO: delete the old cron entries"),
            "Progress: finished porting the invoice export job.",
            "Blocked: waiting for read access to the finance bucket",
            "payroll jobs", "move the billing jobs to the new scheduler", "finance bucket",
            ("invoice export job", "alerts for failed runs", "old cron entries"),
            "Remind me, what is the overall objective of this work at the moment?",
            "Is anything stopping us from moving forward right now?"),
    TaskSet("en",
            "Goal: ship offline mode for the notes app",
            "Goal: ship offline mode and conflict resolution for the notes app by June",
            ("TODO: persist drafts in local storage", "TODO: queue edits while offline",
             "TODO: show a sync badge"),
            "Progress: drafts now persist in local storage, done.",
            "Blocked: the sync API has no endpoint for batched edits",
            "conflict resolution", "ship offline mode for the notes app", "batched edits",
            ("drafts in local storage", "queue edits while offline", "sync badge"),
            "What are we ultimately trying to deliver here, as things stand?",
            "What's holding the work up at the moment?"),
    TaskSet("en",
            "Goal: cut the Docker image size",
            "Goal: cut the Docker image size below 300 MB and the build time in half",
            ("TODO: switch to a slim base image",
             "TODO: drop the dev dependencies from the final stage",
             "TODO: cache the wheel builds"),
            "Progress: switched to a slim base image, completed.",
            "Blocked: the security team must approve the new base image",
            "build time in half", "cut the Docker image size", "security team",
            ("slim base image", "dev dependencies", "wheel builds"),
            "Remind me what end state we're aiming for with this project now?",
            "Are we waiting on anybody before we can continue?"),
)

TOOL_KEYS = (
    ToolKey("Run the sync test suite and tell me what fails.", "run_shell",
            '{"cmd": "pytest -q tests/test_sync.py"}',
            "........................F...........\n"
            "FAILED tests/test_sync.py::{v} - TimeoutError: no ack within 5 s\n"
            "1 failed, 36 passed in 38.20s",
            ("test_resume_after_drop", "test_partial_chunk_retry", "test_clock_skew_merge",
             "test_reconnect_backoff"),
            "{v}",
            "Which check in the synchronisation suite came back red when you executed it "
            "for me?"),
    ToolKey("Open config/limits.toml and check the in-flight cap.", "read_file",
            '{"path": "config/limits.toml"}',
            "[limits]\nmax_inflight = {v}\nmax_body_mb = 32\nidle_timeout_s = 75\n",
            (16, 512, 8), "max_inflight = {v}",
            "In that limits file you looked at, how many concurrent requests may be "
            "outstanding?"),
    ToolKey("Find the commit that introduced jitter in the sync retry code.", "run_shell",
            '{"cmd": "git log --oneline -5 -- sync/retry.py"}',
            "4be21c0 retry: log the attempt number\n{v} retry: jitter the backoff\n"
            "91d0a7e retry: cap attempts\n2c55f13 sync: initial retry loop\n",
            ("3f9a1c2", "7d04be9", "a61c3f0", "c2e8d47", "e5b90a1"), "{v}",
            "What's the short hash of the change that added randomness to the wait between "
            "attempts?"),
)
