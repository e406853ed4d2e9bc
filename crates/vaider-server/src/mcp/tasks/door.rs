//! What the MCP handler asks of the tasks: start a call as one when the client asked, and the
//! 2026-07-28 methods (`tasks/get`, `tasks/update`, `tasks/cancel`), which the MCP library
//! routes here once the client declared the extension (it answers -32021 otherwise).

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, DetailedTask, GetTaskParams, GetTaskResult, MetaObject, TaskPayload,
    UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::legacy::{task_json, CREATED_TASK_META};
use super::{asked, principal, Refusal};
use crate::mcp::VaiderMcp;

impl VaiderMcp {
    /// The call started as a task, when its client asked for one; None: answer it as ever.
    pub(in crate::mcp) async fn as_task(
        &self,
        request: &CallToolRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
        let asked = asked(ctx, request)?;
        let started = self
            .tasks
            .start(self, request.clone(), ctx.clone(), asked)
            .await;
        Some(started.map(|created| created_answer(created, asked.legacy)))
    }

    pub(in crate::mcp) async fn task_get(
        &self,
        request: GetTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let id = request.task_id;
        let who = principal(&ctx);
        let (mut task, tool) = self
            .tasks
            .read(&id, &who)
            .await
            .map_err(|r| refused(r, &id))?;
        // A finished call's result gets its chat view's data as a call answered at once
        // does, made now for this reader: its media links are fresh, and only a client that
        // shows views gets them.
        if let TaskPayload::Completed { result } = &mut task.payload {
            crate::mcp::apps::decorate_stored(&tool, result, &ctx);
        }
        Ok(GetTaskResult::new(task))
    }

    pub(in crate::mcp) async fn task_update(
        &self,
        request: UpdateTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let id = request.task_id;
        let answered = self
            .tasks
            .answer(&id, &principal(&ctx), request.input_responses)
            .await;
        answered.map_err(|r| refused(r, &id))
    }

    /// 2026-07-28 acknowledges a cancel of a task that is over already.
    pub(in crate::mcp) async fn task_cancel(
        &self,
        request: CancelTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let id = request.task_id;
        match self.tasks.cancel(&id, &principal(&ctx)).await {
            Ok(_) | Err(Refusal::Over) => Ok(()),
            Err(refusal) => Err(refused(refusal, &id)),
        }
    }
}

fn refused(refusal: Refusal, id: &str) -> ErrorData {
    ErrorData::invalid_params(refusal.message(id), None)
}

/// A created task as the client's revision expects it: 2026-07-28's `CreateTaskResult`, or a
/// result carrying the 2025-11-25 task for `legacy::translate` to make it that revision's.
fn created_answer(created: DetailedTask, legacy: bool) -> CallToolResponse {
    if !legacy {
        return CallToolResponse::Task(CreateTaskResult::new(created.task));
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text("Started as a task.")]);
    let mut meta = MetaObject::default();
    meta.0.insert(CREATED_TASK_META.into(), task_json(&created));
    result.meta = Some(meta);
    CallToolResponse::Complete(result)
}
