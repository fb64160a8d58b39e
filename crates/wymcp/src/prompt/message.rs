//! [`PromptMessage`] and [`GetPromptResult`]: what `prompts/get` answers.

use serde_json::{Map, Value, json};

use crate::protocol::ProtocolVersion;
use crate::protocol::content::Content;

/// Who speaks a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
}

impl Role {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One message of a prompt: a role and one [`Content`] item (text, image, audio, an embedded
/// resource, or a resource link from 2025-06-18 on).
///
/// ```
/// use serde_json::json;
/// use wymcp::Content;
/// use wymcp::prompt::PromptMessage;
///
/// let m = PromptMessage::user(Content::text("Hi"));
/// assert_eq!(m.to_value(), json!({"role": "user", "content": {"type": "text", "text": "Hi"}}));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// A message of `role`.
    pub fn new(role: Role, content: impl Into<Content>) -> Self {
        PromptMessage {
            role,
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<Content>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// The wire object.
    pub fn to_value(&self) -> Value {
        let content = serde_json::to_value(&self.content).unwrap_or(Value::Null);
        json!({ "role": self.role.as_str(), "content": content })
    }
}

/// The result of getting a prompt: an optional description and the messages.
///
/// ```
/// use wymcp::Content;
/// use wymcp::prompt::{GetPromptResult, PromptMessage};
///
/// let result = GetPromptResult::new(vec![PromptMessage::user(Content::text("Review this"))])
///     .description("A code review prompt");
/// assert_eq!(result.messages.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[must_use]
pub struct GetPromptResult {
    /// A description for this particular rendering.
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

impl GetPromptResult {
    /// A result of `messages`.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        GetPromptResult {
            description: None,
            messages,
        }
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The wire object for a session of `version`. A resource link, which 2025-03-26 prompts
    /// cannot carry, is sent to such a session as a text item naming the link.
    pub fn to_value(&self, version: ProtocolVersion) -> Value {
        let mut map = Map::new();
        if let Some(description) = &self.description {
            map.insert("description".into(), Value::String(description.clone()));
        }
        let messages: Vec<Value> = self
            .messages
            .iter()
            .map(|m| match &m.content {
                Content::ResourceLink { uri, name, .. } if !version.supports_meta() => {
                    PromptMessage::new(m.role, Content::text(format!("{name}: {uri}"))).to_value()
                }
                _ => m.to_value(),
            })
            .collect();
        map.insert("messages".into(), Value::Array(messages));
        Value::Object(map)
    }
}
