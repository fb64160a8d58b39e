//! `#[wymcp::prompt]` on an `async fn`: the function becomes a unit struct of the same name
//! implementing `wymcp::Prompt` (register it as `.prompt(summarize)`).
//!
//! The prompt is named after the function, described by its doc comment; each parameter is
//! an argument (required unless an `Option`), described by its own doc comment, parsed from
//! the string the client sends with `FromStr` (`String` as sent); a `Context` parameter
//! receives the call's context.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, Pat, ReturnType, Type};

use crate::attrs;
use crate::params::single_argument;

/// One parameter of the function.
enum Argument {
    Context {
        by_ref: bool,
    },
    Text {
        name: String,
        ty: Box<Type>,
        optional: bool,
        description: Option<String>,
    },
}

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if let Some(token) = attr.into_iter().next() {
        return Err(syn::Error::new(
            token.span(),
            "`#[wymcp::prompt]` takes no arguments: the function's name is the prompt's",
        ));
    }
    let mut function: ItemFn = syn::parse2(item)?;
    check_signature(&function.sig)?;
    let mut arguments = Vec::new();
    for arg in function.sig.inputs.iter_mut() {
        arguments.push(argument(arg)?);
    }
    let sig = &function.sig;
    let ident = &sig.ident;
    let vis = &function.vis;
    let docs: Vec<_> = function
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    let texts = Texts {
        name: ident.to_string(),
        title: None,
        description: description(&function.attrs),
    };
    let render_fn = Callee {
        path: quote!(Self::render),
        receiver: None,
    };
    let implementation = prompt_impl(&quote!(#ident), &texts, &arguments, sig, &render_fn);
    let render = render(&function);
    Ok(quote! {
        #(#docs)*
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #ident;

        impl #ident {
            #render
        }

        #implementation
    })
}

/// A prompt method (`#[wymcp(prompt)]` in a `#[wymcp::tool]` block, or a method of a
/// `#[wymcp::prompts]` block): a hidden type holding a clone of the block's value,
/// implementing `wymcp::Prompt` by calling the method. Returns its items and the
/// type's name; the method loses its arguments' doc comments (they are the arguments'
/// descriptions).
pub(crate) fn method_prompt(
    self_ty: &Type,
    method: &mut syn::ImplItemFn,
    title: Option<String>,
) -> syn::Result<(TokenStream, syn::Ident)> {
    check_signature(&method.sig)?;
    match method.sig.inputs.first() {
        first if crate::receiver::is_shared_self(first) => {}
        _ => {
            return Err(syn::Error::new(
                method.sig.ident.span(),
                "a prompt method takes `&self` first (a free `async fn` is a `#[wymcp::prompt]`)",
            ));
        }
    }
    let mut arguments = Vec::new();
    for arg in method.sig.inputs.iter_mut().skip(1) {
        arguments.push(argument(arg)?);
    }
    let texts = Texts {
        name: method.sig.ident.to_string(),
        title,
        description: description(&method.attrs),
    };
    let ident = crate::hidden::hidden_ident("Prompt", self_ty, &method.sig.ident);
    let callee = &method.sig.ident;
    let call = Callee {
        path: quote!(<#self_ty>::#callee),
        receiver: Some(quote!(&self.0)),
    };
    let implementation = prompt_impl(&quote!(#ident), &texts, &arguments, &method.sig, &call);
    Ok(crate::hidden::hidden_type(ident, self_ty, implementation))
}

/// A prompt's texts: its name, title and description (an `Option<String>` expression).
struct Texts {
    name: String,
    title: Option<String>,
    description: TokenStream,
}

/// `impl wymcp::Prompt for <target>`, rendering by `call`.
fn prompt_impl(
    target: &TokenStream,
    texts: &Texts,
    arguments: &[Argument],
    sig: &syn::Signature,
    call: &Callee,
) -> TokenStream {
    let Texts {
        name,
        title,
        description,
    } = texts;
    let declared = arguments.iter().filter_map(declaration);
    let (takes, args) = takes(arguments);
    let answer = answer(sig, call, &args);
    let title = title.as_ref().map(|t| {
        quote! {
            fn title(&self) -> ::core::option::Option<::std::string::String> {
                ::core::option::Option::Some(#t.to_owned())
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl ::wymcp::Prompt for #target {
            fn name(&self) -> &str { #name }
            #title
            fn description(&self) -> ::core::option::Option<::std::string::String> { #description }
            fn arguments(&self) -> ::std::vec::Vec<::wymcp::prompt::PromptArgument> {
                ::std::vec![#(#declared),*]
            }
            async fn get(
                &self,
                arguments: ::wymcp::prompt::PromptArguments,
                ctx: ::wymcp::Context,
            ) -> ::core::result::Result<::wymcp::prompt::GetPromptResult, ::wymcp::prompt::PromptError> {
                let _ = (&arguments, &ctx);
                #(#takes)*
                #answer
            }
        }
    }
}

/// The prompt's description: its doc comment, if any.
fn description(attrs: &[syn::Attribute]) -> TokenStream {
    match attrs::doc_text(attrs) {
        Some((text, _)) => quote!(::core::option::Option::Some(#text.to_owned())),
        None => quote!(::core::option::Option::None),
    }
}

/// The rendering call, `<callee>(<receiver>, <args>)`, spanned at the return type (a type
/// that is no prompt answer is refused there).
fn answer(sig: &syn::Signature, callee: &Callee, args: &[TokenStream]) -> TokenStream {
    let output = match &sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => Span::call_site(),
    };
    let Callee { path, receiver } = callee;
    let path = respan(path, output);
    let receiver = receiver.iter();
    quote_spanned! {output=>
        ::wymcp::__private::prompt_answer(#path(#(#receiver,)* #(#args),*).await)
    }
}

/// `tokens` with every token at `span` (so an error about the call points at the return type).
fn respan(tokens: &TokenStream, span: Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|mut token| {
            token.set_span(span);
            token
        })
        .collect()
}

/// What renders the prompt: a function (`Self::render`), or a method and its receiver
/// (`<Notes>::summarize`, `&self.0`).
struct Callee {
    path: TokenStream,
    receiver: Option<TokenStream>,
}

/// The function itself, kept as the prompt type's private `render`, without its docs (they
/// document the type).
fn render(function: &ItemFn) -> ItemFn {
    let mut render = function.clone();
    render.sig.ident = format_ident!("render");
    render.vis = syn::Visibility::Inherited;
    render.attrs.retain(|a| !a.path().is_ident("doc"));
    render
}

/// A prompt's signature: `async`, not generic, returning its messages.
fn check_signature(sig: &syn::Signature) -> syn::Result<()> {
    if sig.asyncness.is_none() {
        return Err(syn::Error::new(
            sig.fn_token.span(),
            "a prompt is an `async fn`",
        ));
    }
    if !sig.generics.params.is_empty() {
        return Err(syn::Error::new(
            sig.generics.span(),
            "a prompt function cannot be generic",
        ));
    }
    if let ReturnType::Default = sig.output {
        return Err(syn::Error::new(
            sig.ident.span(),
            "a prompt returns its messages: `-> String` (one user message), `-> Vec<PromptMessage>` or `-> Result<GetPromptResult, PromptError>`",
        ));
    }
    Ok(())
}

/// `PromptArgument::required("tag").description("...")` for an argument.
fn declaration(argument: &Argument) -> Option<TokenStream> {
    let Argument::Text {
        name,
        optional,
        description,
        ..
    } = argument
    else {
        return None;
    };
    let make = if *optional {
        quote!(optional)
    } else {
        quote!(required)
    };
    let described = description.as_ref().map(|d| quote!(.description(#d)));
    Some(quote!(::wymcp::prompt::PromptArgument::#make(#name) #described))
}

/// The statements taking each argument out of the request, and the call's arguments.
fn takes(arguments: &[Argument]) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let mut takes = Vec::new();
    let mut args = Vec::new();
    for (i, argument) in arguments.iter().enumerate() {
        let arg = format_ident!("__wymcp_arg{i}");
        match argument {
            Argument::Context { by_ref: true } => args.push(quote!(&ctx)),
            Argument::Context { by_ref: false } => args.push(quote!(ctx.clone())),
            Argument::Text {
                name, ty, optional, ..
            } => {
                let take = if *optional {
                    let inner = single_argument(ty, "Option").unwrap_or(ty);
                    quote_spanned! {ty.span()=>
                        ::wymcp::__private::prompt_arg::<#inner>(&arguments, #name)?
                    }
                } else {
                    quote_spanned! {ty.span()=>
                        ::wymcp::__private::prompt_required(
                            ::wymcp::__private::prompt_arg::<#ty>(&arguments, #name)?,
                            #name,
                        )?
                    }
                };
                takes.push(quote!(let #arg = #take;));
                args.push(quote!(#arg));
            }
        }
    }
    (takes, args)
}

fn argument(arg: &mut FnArg) -> syn::Result<Argument> {
    let FnArg::Typed(arg) = arg else {
        return Err(syn::Error::new(
            arg.span(),
            "a prompt is a free `async fn`, without `self`: a prompt with state is a method of a `#[wymcp::prompts]` block (or `#[wymcp(prompt)]` in a `#[wymcp::tool]` block)",
        ));
    };
    if let Some(attr) = arg.attrs.iter().find(|a| a.path().is_ident("wymcp")) {
        return Err(syn::Error::new(
            attr.meta.span(),
            "a prompt argument takes no `#[wymcp(...)]`: its doc comment is its description",
        ));
    }
    let description = attrs::doc_text(&arg.attrs).map(|d| d.0);
    arg.attrs.retain(|a| !a.path().is_ident("doc"));
    let ty = (*arg.ty).clone();
    let context = |t: &Type| matches!(t, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Context"));
    if context(&ty) {
        return Ok(Argument::Context { by_ref: false });
    }
    if let Type::Reference(r) = &ty {
        if context(&r.elem) {
            return Ok(Argument::Context { by_ref: true });
        }
        return Err(syn::Error::new(
            r.span(),
            "a prompt argument owns its value: take `String` for `&str`",
        ));
    }
    let Pat::Ident(pat) = &*arg.pat else {
        return Err(syn::Error::new(
            arg.pat.span(),
            "a prompt argument is a name: `topic: String`",
        ));
    };
    let name = pat.ident.to_string();
    Ok(Argument::Text {
        name: name.strip_prefix("r#").unwrap_or(&name).to_owned(),
        optional: single_argument(&ty, "Option").is_some(),
        ty: Box::new(ty),
        description,
    })
}
