//! `#[wymcp::resources]` on an `impl` block: each `async fn` marked
//! `#[wymcp(template = "notes://notes/{id}")]` reads a resource template, its parameters the
//! template's variables (parsed with `FromStr`); one marked `#[wymcp(uri = "...")]` reads a
//! single resource. For each, the block gains `<method>_resource(&self)`, the
//! `ResourceTemplate` (or `Resource`) to register, reading through a clone of `self`.
//!
//! The template's variables and the method's parameters are checked against each other here:
//! a variable no parameter takes, or a parameter no variable fills, fails the build at the
//! token.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use serde_json::Value;
use syn::spanned::Spanned;
use syn::{FnArg, ImplItem, ImplItemFn, ItemImpl, Pat, ReturnType, Type};

use crate::attrs;
use crate::json::Node;

/// The keys a method's `#[wymcp(...)]` accepts.
const KEYS: [&str; 3] = ["template", "uri", "mime_type"];

/// One resource method, read.
struct Method {
    ident: syn::Ident,
    /// The URI template or URI, with its token.
    address: (String, Span),
    template: bool,
    mime_type: Option<String>,
    description: Option<String>,
    /// The variables as the method takes them: (name, type, span).
    variables: Vec<(String, Type, Span)>,
    /// Whether the method takes the `Context` (last, by value or by reference).
    context: Option<bool>,
    output: Span,
}

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if let Some(token) = attr.into_iter().next() {
        return Err(syn::Error::new(
            token.span(),
            "`#[wymcp::resources]` takes no arguments: mark each method `#[wymcp(template = \"...\")]` or `#[wymcp(uri = \"...\")]`",
        ));
    }
    let mut block: ItemImpl = syn::parse2(item)?;
    if block.trait_.is_some() || !block.generics.params.is_empty() {
        return Err(syn::Error::new(
            block.self_ty.span(),
            "`#[wymcp::resources]` goes on an inherent, non-generic `impl` block",
        ));
    }
    let mut methods = Vec::new();
    for item in &mut block.items {
        let ImplItem::Fn(f) = item else { continue };
        if f.attrs.iter().any(|a| a.path().is_ident("wymcp")) {
            methods.push(read_method(f)?);
            f.attrs.retain(|a| !a.path().is_ident("wymcp"));
        }
    }
    if methods.is_empty() {
        return Err(syn::Error::new(
            block.self_ty.span(),
            "no resource here: mark an `async fn` `#[wymcp(template = \"scheme://{var}\")]` or `#[wymcp(uri = \"scheme://path\")]`",
        ));
    }
    let self_ty = &block.self_ty;
    let constructors = methods.iter().map(constructor);
    Ok(quote! {
        #block

        impl #self_ty {
            #(#constructors)*
        }
    })
}

fn read_method(f: &ImplItemFn) -> syn::Result<Method> {
    let sig = &f.sig;
    if sig.asyncness.is_none() {
        return Err(syn::Error::new(
            sig.fn_token.span(),
            "a resource method is an `async fn`",
        ));
    }
    if !crate::receiver::is_shared_self(sig.inputs.first()) {
        return Err(syn::Error::new(
            sig.ident.span(),
            "a resource method takes `&self` first",
        ));
    }
    let output = match &sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => {
            return Err(syn::Error::new(
                sig.ident.span(),
                "a resource method returns the contents: `-> Result<String, ResourceError>`",
            ));
        }
    };
    let mut method = Method {
        ident: sig.ident.clone(),
        address: (String::new(), sig.ident.span()),
        template: false,
        mime_type: None,
        description: attrs::doc_text(&f.attrs).map(|d| d.0),
        variables: Vec::new(),
        context: None,
        output,
    };
    read_attributes(&mut method, f)?;
    read_parameters(&mut method, sig)?;
    check_variables(&method)?;
    Ok(method)
}

fn read_attributes(method: &mut Method, f: &ImplItemFn) -> syn::Result<()> {
    let mut address = None;
    for entry in attrs::wymcp_entries(&f.attrs, &KEYS)? {
        let Some(Node::Scalar(Value::String(text), span)) = &entry.value else {
            return Err(syn::Error::new(
                entry.span(),
                format!("expected `{} = \"...\"`", entry.name()),
            ));
        };
        match entry.name().as_str() {
            "mime_type" => method.mime_type = Some(text.clone()),
            key => {
                if address.is_some() {
                    return Err(syn::Error::new(
                        entry.span(),
                        "a resource method reads one `template` or one `uri`",
                    ));
                }
                method.template = key == "template";
                address = Some((text.clone(), *span));
            }
        }
    }
    method.address = address.ok_or_else(|| {
        syn::Error::new(
            f.sig.ident.span(),
            "say what the method reads: `#[wymcp(template = \"scheme://{var}\")]` or `#[wymcp(uri = \"scheme://path\")]`",
        )
    })?;
    Ok(())
}

fn read_parameters(method: &mut Method, sig: &syn::Signature) -> syn::Result<()> {
    for arg in sig.inputs.iter().skip(1) {
        let FnArg::Typed(arg) = arg else { continue };
        let is_context = |t: &Type| matches!(t, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Context"));
        match &*arg.ty {
            t if is_context(t) => method.context = Some(false),
            Type::Reference(r) if is_context(&r.elem) => method.context = Some(true),
            ty => {
                let Pat::Ident(pat) = &*arg.pat else {
                    return Err(syn::Error::new(
                        arg.pat.span(),
                        "a template variable is a name: `id: u32`",
                    ));
                };
                let name = pat.ident.to_string();
                let name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
                method.variables.push((name, ty.clone(), pat.ident.span()));
            }
        }
    }
    Ok(())
}

/// The variables of an RFC 6570 template: each expression's names, operator and modifiers
/// (`*`, `:N`) removed. The template's full grammar is `build()`'s to check.
fn template_variables(template: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let expression = &rest[open + 1..open + close];
        let expression = expression.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for spec in expression.split(',') {
            let name = spec.split([':', '*']).next().unwrap_or_default();
            if !name.is_empty() {
                names.push(name.to_owned());
            }
        }
        rest = &rest[open + close + 1..];
    }
    names
}

fn check_variables(method: &Method) -> syn::Result<()> {
    let (address, span) = &method.address;
    let declared = if method.template {
        template_variables(address)
    } else {
        Vec::new()
    };
    for (name, _, span) in &method.variables {
        if !declared.contains(name) {
            let what = if method.template {
                format!(
                    "the template {address:?} has no variable `{name}`: remove the parameter, or add `{{{name}}}` to the template"
                )
            } else {
                format!(
                    "a `uri` resource has no variables: read a `template = \"...{{{name}}}\"` to take `{name}`"
                )
            };
            return Err(syn::Error::new(*span, what));
        }
    }
    if let Some(missing) = declared
        .iter()
        .find(|v| !method.variables.iter().any(|(n, _, _)| n == *v))
    {
        return Err(syn::Error::new(
            *span,
            format!(
                "the template's variable `{missing}` is no parameter of `{}`: add `{missing}: String` (or any `FromStr` type)",
                method.ident
            ),
        ));
    }
    Ok(())
}

/// `<method>_resource(&self)`: the template (or resource) reading through a clone of `self`.
fn constructor(method: &Method) -> TokenStream {
    let ident = &method.ident;
    let constructor = format_ident!("{}_resource", ident);
    let name = ident.to_string();
    let address = &method.address.0;
    let reader = reader(method);
    let (ty, make) = if method.template {
        (
            quote!(::wymcp::ResourceTemplate),
            quote!(::wymcp::ResourceTemplate::new(#address, #name, #reader)),
        )
    } else {
        (
            quote!(::wymcp::Resource),
            quote!(::wymcp::Resource::dynamic(#address, #name, #reader)),
        )
    };
    let description = method
        .description
        .as_ref()
        .map(|d| quote!(.description(#d)));
    let mime_type = method.mime_type.as_ref().map(|m| quote!(.mime_type(#m)));
    let doc =
        format!("The resource `{address}`, read by [`Self::{ident}`] through a clone of `self`.");
    quote! {
        #[doc = #doc]
        #[allow(dead_code)]
        pub fn #constructor(&self) -> #ty
        where
            Self: ::core::clone::Clone + ::core::marker::Send + ::core::marker::Sync + 'static,
        {
            let this = ::core::clone::Clone::clone(self);
            #make #description #mime_type
        }
    }
}

/// The `read_fn` closure: each variable parsed from the URI into its parameter's type, then
/// the method called on a clone of `self`, its answer turned into contents.
fn reader(method: &Method) -> TokenStream {
    let ident = &method.ident;
    let takes = method
        .variables
        .iter()
        .enumerate()
        .map(|(i, (name, ty, _))| {
            let arg = format_ident!("__wymcp_arg{i}");
            quote_spanned! {ty.span()=>
                let #arg = ::wymcp::__private::resource_var::<#ty>(&vars, #name)?;
            }
        });
    let mut args: Vec<TokenStream> = (0..method.variables.len())
        .map(|i| {
            let arg = format_ident!("__wymcp_arg{i}");
            quote!(#arg)
        })
        .collect();
    match method.context {
        Some(true) => args.push(quote!(&ctx)),
        Some(false) => args.push(quote!(ctx)),
        None => {}
    }
    let mime_type = match &method.mime_type {
        Some(m) => quote!(::core::option::Option::Some(#m)),
        None => quote!(::core::option::Option::None),
    };
    let answer = quote_spanned! {method.output=>
        ::wymcp::__private::resource_answer(this.#ident(#(#args),*).await, &uri, #mime_type)
    };
    quote! {
        ::wymcp::resource::read_fn(move |uri, vars, ctx| {
            let this = ::core::clone::Clone::clone(&this);
            async move {
                let _ = (&vars, &ctx);
                #(#takes)*
                #answer
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::template_variables;

    #[test]
    fn the_variables_of_a_template_are_its_expressions_names() {
        assert_eq!(template_variables("notes://notes/{id}"), ["id"]);
        assert_eq!(
            template_variables("file:///{+path}{?q,limit:3}{&tags*}"),
            ["path", "q", "limit", "tags"]
        );
        assert!(template_variables("notes://guide").is_empty());
    }
}
