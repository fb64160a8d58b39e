//! The skills extension's fixtures (`sep-2640-skills-*` scenarios of 0.2.0-alpha.12): a
//! skill read from this example's `skills/` folder (with subfolders, for
//! `resources/directory/read`) and one registered in code under an organizational prefix.

use wymcp::ServerBuilder;
use wymcp::skill::{Skill, SkillError};

/// The folder of the fixture's skills, beside this file.
const SKILLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/conformance/skills");

/// Adds the fixture's skills.
pub(crate) fn register(builder: ServerBuilder) -> Result<ServerBuilder, SkillError> {
    let refunds = Skill::new(
        "---\nname: refunds\ndescription: Process customer refund requests per policy\n---\n\
         # Refunds\n\nAnswer with the template in `templates/email.md`.\n",
    )
    .prefix("acme/billing")
    .file(
        "templates/email.md",
        "Dear customer, your refund is on its way.\n",
    );
    Ok(builder.skills(Skill::load_all(SKILLS)?).skill(refunds))
}
