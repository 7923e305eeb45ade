//! The table of credential formats known by their prefix: one row per format, each with the
//! kind its mark names, the sentence a user is shown, and where the format comes from (the
//! vendor's page, or the id of the gitleaks rule that describes it, `config/gitleaks.toml` in
//! github.com/gitleaks/gitleaks). The shapes with no fixed prefix (private key blocks, signed
//! JWTs, URL passwords, assignments, Azure client secrets) are in `shapes.rs` and `assign.rs`.

/// A set of bytes, as a table (one lookup per byte scanned).
pub(super) struct Set([bool; 256]);

impl Set {
    /// The set `spec` names: single bytes and `a-z` ranges (a `-` first or last is itself).
    pub(super) const fn of(spec: &str) -> Set {
        let s = spec.as_bytes();
        let mut t = [false; 256];
        let mut i = 0;
        while i < s.len() {
            if i + 2 < s.len() && s[i + 1] == b'-' {
                let mut c = s[i];
                while c <= s[i + 2] {
                    t[c as usize] = true;
                    c += 1;
                }
                i += 3;
            } else {
                t[s[i] as usize] = true;
                i += 1;
            }
        }
        Set(t)
    }

    pub(super) fn has(&self, b: u8) -> bool {
        self.0[b as usize]
    }
}

/// The bytes of a token's word: what a token never starts after nor ends before.
pub(super) static WORD: Set = Set::of("A-Za-z0-9_-");
pub(super) static ALNUM: Set = Set::of("A-Za-z0-9");
pub(super) static HEX: Set = Set::of("0-9a-fA-F");
pub(super) static LOWER_HEX: Set = Set::of("0-9a-f");
pub(super) static DIGIT: Set = Set::of("0-9");
/// Letters, digits and `_`.
pub(super) static IDENT: Set = Set::of("A-Za-z0-9_");
/// Letters, digits and `-`.
pub(super) static DASHED: Set = Set::of("A-Za-z0-9-");
pub(super) static WORD_DOT: Set = Set::of("A-Za-z0-9_.-");
pub(super) static WORD_EQ: Set = Set::of("A-Za-z0-9_=-");
pub(super) static WORD_DOT_EQ: Set = Set::of("A-Za-z0-9_.=-");
/// RFC 4648 base32 upper case, the alphabet of AWS key ids.
pub(super) static BASE32: Set = Set::of("A-Z2-7");
pub(super) static UPPER_ALNUM: Set = Set::of("A-Z0-9");
/// Standard base64 without its padding.
pub(super) static BASE64: Set = Set::of("A-Za-z0-9+/");
/// The bech32 alphabet, upper case (age keys).
pub(super) static BECH32: Set = Set::of("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L");

/// One piece of a format after its prefix.
pub(super) enum Seg {
    /// A run of bytes of the set, as long as it goes; its length must lie in `min..=max`.
    /// Trailing dots are not taken (they end a sentence).
    Run(&'static Set, u16, u16),
    /// These bytes exactly.
    Lit(&'static str),
    /// Up to three `=` (base64 padding).
    Pad,
}

/// What the body (everything after the prefix) must hold besides its shape.
#[derive(Clone, Copy)]
pub(super) enum Check {
    None,
    /// A digit.
    Digit,
    /// A letter and a digit.
    LetterDigit,
    /// An upper and a lower case letter.
    MixedCase,
    /// A letter and a digit, and not a name made of words (`sk-learn-notes-2024-…`).
    Random,
    /// A test of its own.
    Fn(fn(&[u8]) -> bool),
}

/// One format known by its prefix.
pub(super) struct Rule {
    /// The kind its mark names: `[redacted:KIND]`.
    pub kind: &'static str,
    /// One sentence naming the format (never the secret).
    pub why: &'static str,
    /// Where the format is described.
    pub source: &'static str,
    pub prefixes: &'static [&'static str],
    pub body: &'static [Seg],
    pub check: Check,
    /// The prefix stays in the text and only the body is masked (a webhook's host and path).
    pub keep_prefix: bool,
}

use Seg::{Lit, Pad, Run};

const fn rule(
    kind: &'static str,
    why: &'static str,
    source: &'static str,
    prefixes: &'static [&'static str],
    body: &'static [Seg],
    check: Check,
) -> Rule {
    Rule {
        kind,
        why,
        source,
        prefixes,
        body,
        check,
        keep_prefix: false,
    }
}

const fn kept(rule: Rule) -> Rule {
    Rule {
        keep_prefix: true,
        ..rule
    }
}

/// The formats, most specific first: where two rows match at one place, the earlier row wins
/// (`sk-ant-` before `sk-`).
pub(super) static RULES: &[Rule] = &[
    rule(
        "aws-access-key-id",
        "An AWS access key id (AKIA, ABIA or ACCA and 16 base32 characters).",
        "AWS IAM User Guide, \"Unique identifiers\" (IAM ID prefixes); gitleaks aws-access-token",
        &["AKIA", "ABIA", "ACCA"],
        &[Run(&BASE32, 16, 16)],
        Check::None,
    ),
    rule(
        "aws-access-key-id",
        "An AWS temporary access key id (ASIA and 16 base32 characters).",
        "AWS IAM User Guide, \"Unique identifiers\" (IAM ID prefixes); gitleaks aws-access-token",
        &["ASIA"],
        &[Run(&BASE32, 16, 16)],
        Check::Digit,
    ),
    rule(
        "aws-access-key-id",
        "An AWS access key id (A3T prefix).",
        "gitleaks aws-access-token",
        &["A3T"],
        &[Run(&UPPER_ALNUM, 17, 17)],
        Check::Digit,
    ),
    rule(
        "github-token",
        "A GitHub token (ghp_, gho_, ghu_, ghs_ or ghr_ and 36 letters and digits).",
        "github.blog 2021-04-05 \"Behind GitHub's new authentication token formats\"; gitleaks \
         github-pat, github-oauth, github-app-token, github-refresh-token",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        &[Run(&ALNUM, 36, 251)],
        Check::None,
    ),
    rule(
        "github-token",
        "A GitHub fine-grained personal access token (github_pat_ prefix).",
        "GitHub Docs, \"Managing your personal access tokens\"; gitleaks github-fine-grained-pat",
        &["github_pat_"],
        &[Run(&IDENT, 82, 251)],
        Check::None,
    ),
    rule(
        "gitlab-token",
        "A GitLab token (glpat-, gldt-, glrt-, glptt- or another gl…- prefix).",
        "GitLab Docs, \"GitLab token overview: token prefixes\"; gitleaks gitlab-pat, \
         gitlab-pat-routable, gitlab-deploy-token, gitlab-runner-authentication-token, gitlab-ptt",
        &[
            "glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glft-", "glimt-", "glagent-",
            "gloas-", "glcbt-", "glffct-",
        ],
        &[Run(&WORD_DOT, 20, 300)],
        Check::None,
    ),
    rule(
        "slack-token",
        "A Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe- or xapp- prefix).",
        "Slack API docs, \"Token types\"; gitleaks slack-bot-token, slack-user-token, \
         slack-app-token, slack-legacy-token, slack-config-access-token",
        &[
            "xoxe.xoxb-",
            "xoxe.xoxp-",
            "xoxb-",
            "xoxp-",
            "xoxa-",
            "xoxr-",
            "xoxs-",
            "xoxo-",
            "xoxe-",
            "xapp-",
        ],
        &[Run(&DASHED, 10, 250)],
        Check::Digit,
    ),
    kept(rule(
        "slack-webhook",
        "A Slack incoming webhook (the path after hooks.slack.com/services/ is the secret).",
        "Slack API docs, \"Sending messages using incoming webhooks\"; gitleaks slack-webhook-url",
        &[
            "hooks.slack.com/services/",
            "hooks.slack.com/workflows/",
            "hooks.slack.com/triggers/",
        ],
        &[Run(&BASE64, 20, 120)],
        Check::Digit,
    )),
    kept(rule(
        "discord-webhook",
        "A Discord webhook (the token after /api/webhooks/ID/ is the secret).",
        "Discord Developer Docs, \"Webhook resource: execute webhook\"",
        &["discord.com/api/webhooks/", "discordapp.com/api/webhooks/"],
        &[Run(&DIGIT, 17, 20), Lit("/"), Run(&WORD, 60, 68)],
        Check::None,
    )),
    rule(
        "stripe-key",
        "A Stripe secret, restricted or webhook signing key (sk_live_, rk_live_, sk_test_, \
         whsec_ …).",
        "Stripe Docs, \"API keys\"; gitleaks stripe-access-token",
        &[
            "sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "rk_prod_", "whsec_",
        ],
        &[Run(&ALNUM, 16, 247)],
        Check::LetterDigit,
    ),
    rule(
        "anthropic-key",
        "An Anthropic API key or OAuth token (sk-ant- prefix).",
        "Anthropic API docs, \"Authentication\" (x-api-key); gitleaks anthropic-api-key, \
         anthropic-admin-api-key",
        &["sk-ant-"],
        &[Run(&WORD, 32, 250)],
        Check::LetterDigit,
    ),
    rule(
        "openai-key",
        "An OpenAI project, service account or admin key (sk-proj-, sk-svcacct-, sk-admin-).",
        "OpenAI API reference, \"Authentication\"; gitleaks openai-api-key",
        &["sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"],
        &[Run(&WORD, 32, 250)],
        Check::LetterDigit,
    ),
    rule(
        "openai-key",
        "An OpenAI-style API key (sk- and 32 or more random characters).",
        "OpenAI API reference, \"Authentication\"; gitleaks openai-api-key",
        &["sk-"],
        &[Run(&WORD, 32, 250)],
        Check::Random,
    ),
    rule(
        "google-api-key",
        "A Google API key (AIza and 35 characters).",
        "Google Cloud docs, \"Manage API keys\"; gitleaks gcp-api-key",
        &["AIza"],
        &[Run(&WORD, 35, 35)],
        Check::None,
    ),
    rule(
        "google-oauth-secret",
        "A Google OAuth client secret (GOCSPX- prefix).",
        "GitHub Docs, \"Supported secret scanning patterns\" (google_oauth_client_secret)",
        &["GOCSPX-"],
        &[Run(&WORD, 24, 40)],
        Check::None,
    ),
    rule(
        "netlify-token",
        "A Netlify access token (nfp_, nfc_, nfo_, nfu_ or nfb_ prefix).",
        "answers.netlify.com, \"Change to the Netlify authentication token format\" (2023)",
        &["nfp_", "nfc_", "nfo_", "nfu_", "nfb_"],
        &[Run(&ALNUM, 20, 40)],
        Check::LetterDigit,
    ),
    rule(
        "npm-token",
        "An npm access token (npm_ and 36 letters and digits).",
        "GitHub changelog 2021-09-23, \"Announcing npm's new access token format\"; gitleaks \
         npm-access-token",
        &["npm_"],
        &[Run(&ALNUM, 36, 36)],
        Check::None,
    ),
    rule(
        "pypi-token",
        "A PyPI API token (pypi- and a macaroon for pypi.org or test.pypi.org).",
        "PyPI help, \"API tokens\"; gitleaks pypi-upload-token",
        &["pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"],
        &[Run(&WORD, 50, 1000)],
        Check::None,
    ),
    rule(
        "twilio-key",
        "A Twilio API key (SK and 32 hex digits).",
        "Twilio Docs, \"API keys\"; gitleaks twilio-api-key",
        &["SK"],
        &[Run(&HEX, 32, 32)],
        Check::LetterDigit,
    ),
    rule(
        "sendgrid-key",
        "A SendGrid API key (SG. and two base64url parts).",
        "Twilio SendGrid Docs, \"API keys\"; gitleaks sendgrid-api-token",
        &["SG."],
        &[Run(&WORD, 22, 22), Lit("."), Run(&WORD, 43, 43)],
        Check::None,
    ),
    rule(
        "discord-bot-token",
        "A Discord bot token (a user id in base64, a timestamp and an HMAC).",
        "Discord Developer Docs, \"Reference: authentication\"; discord.py docs, \"Tokens\"",
        &["M", "N", "O"],
        &[
            Run(&WORD, 22, 27),
            Lit("."),
            Run(&WORD, 6, 7),
            Lit("."),
            Run(&WORD, 27, 38),
        ],
        Check::Fn(super::shapes::discord_user_id),
    ),
    rule(
        "telegram-bot-token",
        "A Telegram bot token (a bot id, a colon and 35 characters).",
        "Telegram Bot API, \"Authorizing your bot\"; gitleaks telegram-bot-api-token",
        &["1", "2", "3", "4", "5", "6", "7", "8", "9"],
        &[Run(&DIGIT, 7, 9), Lit(":AA"), Run(&WORD, 33, 33)],
        Check::None,
    ),
    rule(
        "huggingface-token",
        "A Hugging Face access token (hf_ or api_org_ and 34 letters).",
        "Hugging Face docs, \"User access tokens\"; gitleaks huggingface-access-token, \
         huggingface-organization-api-token",
        &["hf_", "api_org_"],
        &[Run(&ALNUM, 34, 34)],
        Check::MixedCase,
    ),
    rule(
        "digitalocean-token",
        "A DigitalOcean token (dop_v1_, doo_v1_ or dor_v1_ and 64 hex digits).",
        "DigitalOcean Docs, \"How to create a personal access token\"; gitleaks \
         digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token",
        &["dop_v1_", "doo_v1_", "dor_v1_"],
        &[Run(&LOWER_HEX, 64, 64)],
        Check::None,
    ),
    rule(
        "shopify-token",
        "A Shopify access token or shared secret (shpat_, shpca_, shppa_ or shpss_).",
        "Shopify dev docs, \"About access tokens\"; gitleaks shopify-access-token, \
         shopify-custom-access-token, shopify-private-app-access-token, shopify-shared-secret",
        &["shpat_", "shpca_", "shppa_", "shpss_"],
        &[Run(&HEX, 32, 32)],
        Check::None,
    ),
    rule(
        "linear-key",
        "A Linear API key (lin_api_ prefix).",
        "gitleaks linear-api-key",
        &["lin_api_"],
        &[Run(&ALNUM, 40, 40)],
        Check::None,
    ),
    rule(
        "age-secret-key",
        "An age secret key (AGE-SECRET-KEY-1 and 58 bech32 characters).",
        "age-encryption.org/v1 specification; gitleaks age-secret-key",
        &["AGE-SECRET-KEY-1"],
        &[Run(&BECH32, 58, 58)],
        Check::None,
    ),
    rule(
        "vault-token",
        "A HashiCorp Vault service or batch token (hvs. or hvb. prefix).",
        "Vault docs, \"Tokens: token prefixes\"; gitleaks vault-service-token",
        &["hvs.", "hvb."],
        &[Run(&WORD, 90, 200)],
        Check::None,
    ),
    rule(
        "doppler-token",
        "A Doppler token (dp.pt., dp.sa., dp.ct., dp.scim. or dp.audit. prefix).",
        "Doppler docs, \"Token formats\"; gitleaks doppler-api-token",
        &["dp.pt.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."],
        &[Run(&ALNUM, 40, 44)],
        Check::None,
    ),
    rule(
        "databricks-token",
        "A Databricks personal access token (dapi and 32 hex digits).",
        "Databricks docs, \"Personal access token authentication\"; gitleaks databricks-api-token",
        &["dapi"],
        &[Run(&LOWER_HEX, 32, 32)],
        Check::LetterDigit,
    ),
    rule(
        "pulumi-token",
        "A Pulumi access token (pul- and 40 hex digits).",
        "gitleaks pulumi-api-token",
        &["pul-"],
        &[Run(&LOWER_HEX, 40, 40)],
        Check::None,
    ),
    rule(
        "postman-key",
        "A Postman API key (PMAK- prefix).",
        "Postman docs, \"Generate a Postman API key\"; gitleaks postman-api-token",
        &["PMAK-"],
        &[Run(&HEX, 24, 24), Lit("-"), Run(&HEX, 34, 34)],
        Check::None,
    ),
    rule(
        "grafana-token",
        "A Grafana Cloud token (glc_ prefix).",
        "gitleaks grafana-cloud-api-token",
        &["glc_"],
        &[Run(&BASE64, 32, 400), Pad],
        Check::LetterDigit,
    ),
    rule(
        "grafana-token",
        "A Grafana service account token (glsa_ prefix).",
        "Grafana docs, \"Service accounts\"; gitleaks grafana-service-account-token",
        &["glsa_"],
        &[Run(&ALNUM, 32, 32), Lit("_"), Run(&HEX, 8, 8)],
        Check::None,
    ),
    rule(
        "heroku-key",
        "A Heroku API key (HRKU-AA prefix).",
        "gitleaks heroku-api-key-v2",
        &["HRKU-AA"],
        &[Run(&WORD, 58, 58)],
        Check::None,
    ),
    rule(
        "onepassword-token",
        "A 1Password service account token (ops_eyJ prefix).",
        "1Password developer docs, \"Service accounts\"; gitleaks 1password-service-account-token",
        &["ops_eyJ"],
        &[Run(&BASE64, 250, 4000), Pad],
        Check::None,
    ),
    rule(
        "sentry-token",
        "A Sentry user auth token (sntryu_ and 64 hex digits).",
        "Sentry docs, \"Auth tokens\"; gitleaks sentry-user-token",
        &["sntryu_"],
        &[Run(&LOWER_HEX, 64, 64)],
        Check::None,
    ),
    rule(
        "sentry-token",
        "A Sentry organization auth token (sntrys_ prefix).",
        "Sentry docs, \"Auth tokens\"; gitleaks sentry-org-token",
        &["sntrys_eyJ"],
        &[Run(&BASE64, 40, 600), Pad, Lit("_"), Run(&BASE64, 43, 43)],
        Check::None,
    ),
    rule(
        "notion-token",
        "A Notion integration token (ntn_ prefix).",
        "Notion developers, \"Authorization\"; gitleaks notion-api-token",
        &["ntn_"],
        &[Run(&ALNUM, 46, 46)],
        Check::LetterDigit,
    ),
    rule(
        "rubygems-key",
        "A RubyGems API key (rubygems_ and 48 hex digits).",
        "RubyGems guides, \"API key scopes\"; gitleaks rubygems-api-token",
        &["rubygems_"],
        &[Run(&LOWER_HEX, 48, 48)],
        Check::None,
    ),
    rule(
        "flyio-token",
        "A Fly.io access token (fo1_ prefix).",
        "gitleaks flyio-access-token",
        &["fo1_"],
        &[Run(&WORD, 43, 43)],
        Check::None,
    ),
    rule(
        "flyio-token",
        "A Fly.io macaroon token (fm1a_, fm1r_ or fm2_ prefix).",
        "gitleaks flyio-access-token",
        &["fm1a_", "fm1r_", "fm2_"],
        &[Run(&BASE64, 100, 4000), Pad],
        Check::None,
    ),
    rule(
        "square-token",
        "A Square access token or application secret (sq0atp- or sq0csp- prefix).",
        "Square developer docs, \"Access tokens\"; gitleaks square-access-token, square-secret",
        &["sq0atp-", "sq0csp-"],
        &[Run(&WORD, 22, 60)],
        Check::None,
    ),
    rule(
        "atlassian-token",
        "An Atlassian API token (ATATT3 prefix).",
        "Atlassian support, \"Manage API tokens for your Atlassian account\"; gitleaks \
         atlassian-api-token",
        &["ATATT3"],
        &[Run(&WORD_EQ, 180, 200)],
        Check::None,
    ),
    rule(
        "planetscale-token",
        "A PlanetScale token or password (pscale_tkn_, pscale_pw_ or pscale_oauth_ prefix).",
        "gitleaks planetscale-api-token, planetscale-password, planetscale-oauth-token",
        &["pscale_tkn_", "pscale_pw_", "pscale_oauth_"],
        &[Run(&WORD_DOT_EQ, 32, 64)],
        Check::None,
    ),
    rule(
        "brevo-key",
        "A Brevo (Sendinblue) API key (xkeysib- prefix).",
        "gitleaks sendinblue-api-token",
        &["xkeysib-"],
        &[Run(&LOWER_HEX, 64, 64), Lit("-"), Run(&ALNUM, 16, 16)],
        Check::None,
    ),
];
